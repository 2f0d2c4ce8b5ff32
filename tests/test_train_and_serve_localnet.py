"""From a checkpoint to a served model on one localnet (2 validators, each a host with its ML node; val1 opts in to
fetching models): ``gonkad localnet train-and-serve`` trains a tiny DiLoCo run, verifies it, publishes its final
weights on val0, registers them by a governance proposal that passes with the validators' votes, and waits until
val1 has fetched, loaded and registered the model and a TA routes to it; then a chat through the client SDK for the
new model is answered by val1 and paid on chain."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from chain_reads import balance, finished
from nodes import running_localnet

from gonka import Gonka
from gonkad import localnet
from host.models import node_id
from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.client.querier import Querier
from sdk.client.txbuilder import address_of
from sdk.keyring.keyring import Keyring
from sdk.services import gonka

pytestmark = pytest.mark.localnet
_base = localnet.load_settings(validators=2, chain_id="gonka-serve", with_services=True)
assert _base.services is not None
SETTINGS = _base.model_copy(
    update={"services": _base.services.model_copy(update={"transfer_agents": 1, "fetching_hosts": 1})}
)
INFERENCE = gonka("inference").query


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network after ``gonkad localnet train-and-serve``: its root, the command's JSON and progress lines."""
    for root in running_localnet(tmp_path_factory.mktemp("serve"), SETTINGS):
        done = subprocess.run(
            [sys.executable, "-m", "gonkad", "localnet", "train-and-serve", "--home", str(root)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
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
