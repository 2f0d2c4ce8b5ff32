"""From training to a served model on one localnet (2 validators, each a host with its ML node; val1 opts in to
fetching models): ``gonkad localnet train-and-serve`` trains a tiny DiLoCo run on chain with the hosts val0 and val1
as its workers (worker1 with the test-only fault: round 0 trained on another data order than it commits), the
faucet escrowing its budget; the hosts' executors replay each other's rounds and send their verdicts, the run
finishes and the workers claim their pay; its final weights are published on val0, registered by a governance
proposal (naming the run) that passes with the validators' votes, and val1 fetches, loads and registers the model
and a TA routes to it. The run is checked to the ngonka: paid exactly for its 3 valid rounds, the cheat's round
refunded and slashed exactly, the supply moved only by the chain's mints and burns; then a chat through the
client SDK for the new model is answered by val1 and paid on chain."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from chain_reads import balance, block_events, collateral_at, finished, supply
from nodes import running_localnet
from test_bank_localnet import bank_events, minted_less_burned

from gonka import Gonka
from gonkad import localnet
from gonkad.localnet_serve import BUDGET
from host.models import node_id
from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from protogen.gonka.learning.v1 import learning_pb2
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32
from sdk.keyring.keyring import Keyring
from sdk.services import gonka
from x.learning.client import LearningClient

pytestmark = pytest.mark.localnet
_base = localnet.load_settings(validators=2, chain_id="gonka-serve", with_services=True)
assert _base.services is not None
SETTINGS = _base.model_copy(
    update={"services": _base.services.model_copy(update={"transfer_agents": 1, "fetching_hosts": 1})}
)
INFERENCE = gonka("inference").query
SHARE = BUDGET // 4
"""Of each of the run's 2 workers' 2 rounds."""


def model_of(querier: Querier, model_id: str) -> inference_pb2.Model:
    return querier.query(
        INFERENCE + "Model", query_pb2.QueryModelRequest(id=model_id), query_pb2.QueryModelResponse
    ).model


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network after ``gonkad localnet train-and-serve``: its root, the command's JSON and progress lines."""
    for root in running_localnet(tmp_path_factory.mktemp("serve"), SETTINGS):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "gonkad",
                "localnet",
                "train-and-serve",
                "--home",
                str(root),
                "--test-fault-worker",
                "worker1",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        print(done.stderr, file=sys.stderr)  # the progress lines, shown with a failure
        assert done.returncode == 0, done.stderr[-3000:]
        node = localnet.load(root).nodes[0]
        yield {
            "root": root,
            "out": json.loads(done.stdout),
            "progress": done.stderr,
            "querier": Querier(node.rpc, grpc_addr=f"127.0.0.1:{node.grpc_port}"),
        }


def test_the_trained_model_is_registered_fetched_and_listed(served: dict[str, Any]) -> None:
    root, out, querier = served["root"], served["out"], served["querier"]
    for n in range(1, 8):
        assert f"[{n}/7] " in served["progress"] and "FAILED" not in served["progress"]
    assert model_of(querier, out["model"]).training_run_id == out["run_id"]
    model = querier.query(
        INFERENCE + "Model", query_pb2.QueryModelRequest(id=out["model"]), query_pb2.QueryModelResponse
    ).model
    assert model.name.startswith("diloco-tiny-") and model.source_url == out["source_url"]
    assert out["source_url"].endswith(f"/models/{model.weights_sha256}")
    manifest = httpx.get(out["source_url"] + "/manifest.json", timeout=5).json()  # val0 publishes it
    assert f"{manifest['name']}@sha256:{manifest['weights_sha256']}" == out["model"]
    spec = localnet.load(root)
    assert spec.services is not None
    val1 = address_of(Keyring(root, "test").private_key("val1"))
    assert out["hosts"] == [val1]  # only the host that opted in
    nodes = querier.query(
        INFERENCE + "Nodes", query_pb2.QueryNodesRequest(model=out["model"]), query_pb2.QueryNodesResponse
    ).nodes
    executor1 = spec.services.of("executor")[1]
    assert [(n.operator, n.node_id, n.url) for n in nodes] == [(val1, node_id(model.weights_sha256), executor1.url)]
    status = httpx.get(executor1.url + "/v1/executor/status", timeout=5).json()["models"]
    assert list(status["serving"]) == [out["model"]] and status["refused"] == {}
    ta = spec.services.of("agent")[0]
    assert out["model"] in {card["id"] for card in httpx.get(ta.url + "/v1/models", timeout=5).json()["data"]}


def test_a_chat_to_the_new_model_is_answered_and_paid(served: dict[str, Any]) -> None:
    root, out, querier = served["root"], served["out"], served["querier"]
    spec = localnet.load(root)
    assert spec.services is not None
    faucet = Keyring(root, "test").private_key("faucet")
    before = balance(querier, address_of(faucet))
    client = Gonka(ta_urls=[ta.url for ta in spec.services.of("agent")], key=faucet)
    answer = client.chat.completions.create(
        model=out["model"], max_tokens=8, messages=[{"role": "user", "content": "What is a list?"}]
    )
    assert answer.choices[0].message.content and answer.usage is not None
    assert client.last_inference_id
    record = finished(querier, client.last_inference_id, timeout_s=30)
    assert record.status == inference_pb2.STATUS_FINISHED and record.model == out["model"]
    assert record.executor == address_of(Keyring(root, "test").private_key("val1"))
    assert record.completion_tokens == answer.usage.completion_tokens
    assert record.payment == record.completion_tokens * record.fee_per_token > 0
    assert before - balance(querier, address_of(faucet)) == record.payment


def test_the_run_paid_its_valid_rounds_and_slashed_the_cheat_exactly(served: dict[str, Any]) -> None:
    root, out, querier = served["root"], served["out"], served["querier"]
    keys = Keyring(root, "test")
    val0, val1, faucet = (address_of(keys.private_key(name)) for name in ("val0", "val1", "faucet"))
    node = localnet.load(root).nodes[0]
    rpc, learning = CometRPC(node.rpc), LearningClient(node.rpc)
    run = learning.run(out["run_id"])
    assert (run["status"], run["creator"], run["workers"]) == (learning_pb2.RUN_STATUS_FINISHED, faucet, [val0, val1])
    outcomes = {
        (r, c["worker"]): (c["outcome"], c["paid"], [v["address"] for v in c["verifiers"]])
        for r in (0, 1)
        for c in learning.checkpoints(out["run_id"], r)
    }
    valid, invalid = learning_pb2.OUTCOME_VALID, learning_pb2.OUTCOME_INVALID
    assert outcomes == {
        (0, val0): (valid, True, [val1]),
        (0, val1): (invalid, False, [val0]),  # the cheat's round 0, replayed by val0
        (1, val0): (valid, True, [val1]),
        (1, val1): (valid, True, [val0]),
    }
    [caught] = learning.verdicts(out["run_id"], 0, val1)
    assert (caught["verifier"], caught["valid"]) == (val0, False)
    assert caught["reason"].startswith("weights_hash: replaying the round"), caught["reason"]
    for r, worker, verifier in ((0, val0, val1), (1, val0, val1), (1, val1, val0)):
        [judged] = learning.verdicts(out["run_id"], r, worker)
        assert (judged["verifier"], judged["valid"], judged["reason"]) == (verifier, True, "")

    # Paid for exactly its 3 valid rounds; the cheat's share and the remainder back to the faucet; nothing held.
    assert (int(run["paid"]), int(run["refunded"])) == (3 * SHARE, SHARE + BUDGET - 4 * SHARE)
    assert balance(querier, bech32.encode(module_address("learning"))) == 0

    # The cheat slashed exactly a fifth of its collateral in the block that settled its round, paid to val0.
    settled = learning.checkpoint(out["run_id"], 0, val1)["settle_height"]
    [event] = [e for e in block_events(rpc, settled, "settle_checkpoint") if e["worker"] == val1]
    before = collateral_at(querier, val1, settled - 1)
    assert event["outcome"] == "INVALID" and event["slashed"] == f"{val1}:{before // 5}"
    assert collateral_at(querier, val1, settled) == before - before // 5
    payouts = [a for kind, a in bank_events(rpc, settled, settled) if kind == "transfer" and a["recipient"] == val0]
    assert f"{before // 5}ngonka" in [a["amount"] for a in payouts]

    # The supply moved only by the chain's own mints and burns from the run's creation to its end.
    created = int(run["created_height"])
    finished_at = int(run["finished_height"])
    moved = minted_less_burned(bank_events(rpc, created, finished_at))
    assert supply(querier, finished_at) == supply(querier, created - 1) + moved
