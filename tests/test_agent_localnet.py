"""The Transfer Agent on a real chain: a 1-validator localnet whose genesis registers one model, the validator's
host registering a fake ML node (tests/agent_fakes.FakeNode) by ``gonkad tx inference register-node``, and
``gonkad agent start`` as a subprocess on the chain (``x.inference.client.ChainInferenceView``: queries over
gRPC, ``MsgStartInference`` signed with the TA's key and sent with ``broadcast_tx_sync``). The localnet's
funded ``faucet`` key sends a chat request with the official ``openai`` client signed by
``sdk.client.signing.SignedRequests``: the answer comes back, and the inference is on chain, ``STARTED``, with
exactly ``max_tokens × fee_per_token`` ngonka moved from the requester to the escrow. An unfunded key gets
402 and nothing is started. The TA stops cleanly on SIGTERM (exit code 0, pid file removed).

Finishing is not wired yet: the executor's side (the host's program sending ``MsgFinishInference`` for what
its node served) comes next, so the inference here stays STARTED (and would expire after
``timeout_blocks``); payment and refund are covered in process by tests/test_inference.py.
"""

from __future__ import annotations

import hashlib
import json
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query

from agent_fakes import FakeNode
from gonkad import genesis, localnet
from gonkad.paths import pid_file
from nodes import running_localnet
from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.signing import SignedRequests, verify_identity
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from servers import serve

pytestmark = pytest.mark.localnet

DENOM = "ngonka"
SHA = hashlib.sha256(b"agent localnet weights").hexdigest()
MODEL = f"fake-llm@{SHA}"
PRICE = 7
MAX_TOKENS = 16
FEE = PRICE + 2
OVERRIDES = {"inference": {"models": [{"id": MODEL, "name": "fake-llm", "weights_sha256": SHA,
                                       "context_length": "1024", "price_per_token": str(PRICE)}]}}
_base = localnet.load_settings(validators=1, chain_id="gonka-agent")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
QUERY = "/gonka.inference.v1.Query/"
ESCROW = bech32.encode(module_address("inference"))
READY_TIMEOUT_S = 30


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


def committed(rpc: CometRPC, txhash: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return rpc.tx(bytes.fromhex(txhash))
        except RPCError:
            assert time.monotonic() < deadline, f"tx {txhash} not committed in {timeout_s}s"
            time.sleep(0.1)


def balance(querier: Querier, address: str) -> int:
    reply = querier.query("/cosmos.bank.v1beta1.Query/Balance", bank_query.QueryBalanceRequest(
        address=address, denom=DENOM), bank_query.QueryBalanceResponse)
    return int(reply.balance.amount or 0)


def inference(querier: Querier, inference_id: str, timeout_s: float = 20) -> inference_pb2.Inference:
    """The inference once its start is committed (the TA answers after CheckTx, before the block)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return querier.query(QUERY + "Inference", query_pb2.QueryInferenceRequest(id=inference_id),
                                 query_pb2.QueryInferenceResponse).inference
        except RPCError:
            assert time.monotonic() < deadline, f"inference {inference_id} not on chain in {timeout_s}s"
            time.sleep(0.1)


def ready_line(process: subprocess.Popen[str], timeout_s: float) -> dict[str, Any]:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            line = process.stdout.readline()
            assert line, f"the agent exited with {process.wait()} before it was ready"
            return json.loads(line)
        assert process.poll() is None, f"the agent exited with {process.returncode}"
    raise AssertionError(f"the agent was not ready in {timeout_s}s")


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network, the fake node registered for val0's host, and ``gonkad agent start`` (key val0) on it."""
    fake = FakeNode("fake", models=(MODEL,), max_concurrency=4)
    for root in running_localnet(tmp_path_factory.mktemp("agent"), SETTINGS):
        spec = localnet.load(root).nodes[0]
        rpc, grpc_addr = spec.rpc, f"127.0.0.1:{spec.grpc_port}"
        with serve(fake) as node_url:
            sent = gonkad("tx", "inference", "register-node", "node-0", node_url, "--models", MODEL,
                          "--max-concurrency", "4", "--from", "val0", "--home", str(root), "--keyring-backend", "test",
                          "--node", rpc, "--gas", "400000", "-y", "--output", "json")
            assert sent.returncode == 0, sent.stdout + sent.stderr
            result = committed(CometRPC(rpc), json.loads(sent.stdout)["txhash"])["tx_result"]
            assert int(result.get("code", 0)) == 0, result
            log = (root / "agent.log").open("w")
            process = subprocess.Popen(
                [sys.executable, "-m", "gonkad", "agent", "start", "--home", str(root), "--node", rpc,
                 "--grpc-addr", grpc_addr, "--from", "val0", "--keyring-backend", "test", "--port", "0",
                 "--ta", "http://ta-2.example"],
                stdout=subprocess.PIPE, stderr=log, text=True)
            try:
                ready = ready_line(process, READY_TIMEOUT_S)
                yield {"root": root, "rpc": rpc, "querier": Querier(rpc, grpc_addr), "ta": ready["url"],
                       "ready": ready, "process": process, "fake": fake,
                       "host": address_of(localnet.load_key(root, "val0"))}
            finally:
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()
                log.close()


def client(ta: str, key: secp256k1.PrivateKey, ta_address: str) -> openai.OpenAI:
    http = httpx.Client(auth=SignedRequests(key, ta_address), timeout=30)
    return openai.OpenAI(base_url=f"{ta}/v1", api_key="unused", http_client=http, max_retries=0)


def test_a_signed_chat_request_is_answered_and_started_on_chain_with_its_escrow(net: dict[str, Any]) -> None:
    ta, querier, root = net["ta"], net["querier"], net["root"]
    identity = httpx.get(f"{ta}/v1/identity", timeout=10).json()
    assert verify_identity(identity)
    assert (identity["address"], identity["chain_id"], identity["tas"]) == (
        net["host"], "gonka-agent", ["http://ta-2.example"])
    assert identity["latest_height"] >= 2
    models = httpx.get(f"{ta}/v1/models", timeout=10).json()["data"]
    assert [(m["id"], m["price_per_token"], m["context_length"]) for m in models] == [(MODEL, PRICE, 1024)]
    assert pid_file(root, "agent").read_text() == str(net["ready"]["pid"])

    faucet = localnet.load_key(root, "faucet")
    requester = address_of(faucet)
    before, escrow_before = balance(querier, requester), balance(querier, ESCROW)
    raw = client(ta, faucet, identity["address"]).chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=MAX_TOKENS,
        extra_body={"fee_per_token": FEE})
    answer = raw.parse()
    assert answer.choices[0].message.content == "fake says hi"
    inference_id = raw.headers["x-inference-id"]
    assert len(bytes.fromhex(inference_id)) == 32

    record = inference(querier, inference_id)
    assert record.status == inference_pb2.STATUS_STARTED
    assert (record.requester, record.ta, record.executor, record.model) == (requester, net["host"], net["host"], MODEL)
    assert (record.max_tokens, record.fee_per_token, record.escrow, record.denom) == (
        MAX_TOKENS, FEE, MAX_TOKENS * FEE, DENOM)
    assert balance(querier, requester) == before - MAX_TOKENS * FEE
    assert balance(querier, ESCROW) == escrow_before + MAX_TOKENS * FEE
    assert net["fake"].served[-1]["model"] == MODEL


def test_concurrent_requests_and_a_sequence_used_elsewhere(net: dict[str, Any]) -> None:
    """Eight requests at once: every start is signed at its own sequence (the view's lock) and all are on chain
    with their exact escrow. Then the TA's key sends a transaction of its own outside the TA, so the TA's
    counted sequence is stale: its next start is refused by CheckTx (``sdk/32``), re-signed at the sequence
    the node expects, and goes through."""
    ta, querier, root = net["ta"], net["querier"], net["root"]
    faucet = localnet.load_key(root, "faucet")
    requester = address_of(faucet)
    chat = client(ta, faucet, net["host"])
    before = balance(querier, requester)

    def ask(i: int) -> str:
        raw = chat.chat.completions.with_raw_response.create(
            model=MODEL, messages=[{"role": "user", "content": f"question {i}"}], max_tokens=MAX_TOKENS - i)
        assert raw.parse().choices[0].message.content == "fake says hi"
        return raw.headers["x-inference-id"]

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(ask, range(8)))
    assert len(set(ids)) == 8
    escrows = [inference(querier, the_id).escrow for the_id in ids]
    assert escrows == [(MAX_TOKENS - i) * PRICE for i in range(8)]
    assert balance(querier, requester) == before - sum(escrows)

    sent = gonkad("tx", "bank", "send", "val0", requester, "1ngonka", "--home", str(root), "--keyring-backend",
                  "test", "--node", net["rpc"], "-y", "--output", "json")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert int(committed(CometRPC(net["rpc"]), json.loads(sent.stdout)["txhash"])["tx_result"].get("code", 0)) == 0
    middle = balance(querier, requester)
    last = ask(0)
    assert inference(querier, last).escrow == MAX_TOKENS * PRICE
    assert balance(querier, requester) == middle - MAX_TOKENS * PRICE
    assert "account sequence mismatch" in (root / "agent.log").read_text()  # the retry happened


def test_an_unfunded_requester_gets_402_and_nothing_is_started(net: dict[str, Any]) -> None:
    ta, querier = net["ta"], net["querier"]
    poor = secp256k1.PrivateKey(hashlib.sha256(b"agent localnet: never funded").digest())
    served = len(net["fake"].served)
    with pytest.raises(openai.APIStatusError) as refused:
        client(ta, poor, net["host"]).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=MAX_TOKENS)
    assert refused.value.status_code == 402
    assert refused.value.body["code"] == "insufficient_funds"  # type: ignore[index]
    height = CometRPC(net["rpc"]).height()
    while CometRPC(net["rpc"]).height() < height + 2:  # a start would have been committed by now
        time.sleep(0.1)
    started = querier.query(QUERY + "Inferences", query_pb2.QueryInferencesRequest(requester=address_of(poor)),
                            query_pb2.QueryInferencesResponse).inferences
    assert list(started) == [] and len(net["fake"].served) == served


def test_the_agent_stops_cleanly_on_sigterm(net: dict[str, Any]) -> None:
    process: subprocess.Popen[str] = net["process"]
    assert process.poll() is None
    process.terminate()
    assert process.wait(timeout=15) == 0
    assert not pid_file(net["root"], "agent").exists()
