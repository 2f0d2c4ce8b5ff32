"""The Transfer Agent and the executor proxy on a real chain: a 1-validator localnet whose genesis registers one
model, the validator's host running ``gonkad executor start`` in front of a fake ML node (tests/agent_fakes.FakeNode)
and registering the proxy's URL by ``gonkad tx inference register-node``, and ``gonkad agent start`` (a key of its
own, funded by the faucet) as a subprocess on the chain (``agent.view.ChainInferenceView``: queries over
gRPC, ``MsgStartInference`` signed with the TA's key and sent with ``broadcast_tx_sync``). The localnet's funded
``faucet`` key sends chat requests with the official ``openai`` client signed by
``sdk.client.signing.SignedRequests``: the answer comes back, the TA starts the inference on chain (escrow), the
executor proxy derives the finish from its node's answer and its ``Finisher`` sends ``MsgFinishInference`` signed
by the host: in a block after its start and before its expiry the inference is ``FINISHED`` with the node's
token counts, the requester paid exactly ``completion_tokens × fee_per_token`` (the rest refunded), the host's
payment is in its balance and locked by vesting, the escrow account is back where it was and the supply is
unchanged. An unfunded key gets 402 and nothing is started; a request straight to the executor proxy without a
requester's signature gets 401 and nothing is served or finished. Both programs stop cleanly on SIGTERM (exit
code 0, pid files removed).

The genesis sets the rewards' issuance cap to 0 and an epoch of 100,000 blocks, so no epoch ends (nothing minted,
nothing released from vesting) while the amounts are compared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from agent_fakes import FakeNode
from browser import page_agrees, rows
from chain_reads import DENOM, QUERY, balance, committed, finished, gonkad, inferences_of, sent_ok, supply, vesting
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from nodes import running_localnet
from selenium import webdriver
from servers import serve

from gonkad import genesis, localnet
from gonkad.paths import pid_file
from host.terms import TOP_LOGPROBS
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.abci.blocks import INJECTED_ENTRY_MAGIC
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC
from sdk.client.signing import SignedRequests, request_headers, verify_identity
from sdk.client.txbuilder import address_of, query_account
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id as id_of_request
from sdk.keyring.keyring import Keyring
from sdk.module import type_url
from sdk.tx import Tx, decode_tx

SHA = hashlib.sha256(b"agent localnet weights").hexdigest()
MODEL = f"fake-llm@sha256:{SHA}"
PRICE = 7
MAX_TOKENS = 16
FEE = PRICE + 2
OVERRIDES = {
    "inference": {
        "models": [
            {
                "id": MODEL,
                "name": "fake-llm",
                "weights_sha256": SHA,
                "context_length": "1024",
                "price_per_token": str(PRICE),
            }
        ]
    },
    "rewards": {"params": {"issuance_cap": "0"}},
    "epochs": {"params": {"epoch_length": "100000"}},
}
_base = localnet.load_settings(validators=1, chain_id="gonka-agent")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
ESCROW = bech32.encode(module_address("inference"))
READY_TIMEOUT_S = 30
ANSWER = hashlib.sha256(b"fake says hi").digest()
PROMPT_TOKENS, COMPLETION_TOKENS = 5, 3
"""What the fake node reports in its usage."""
HEIGHT_TIMEOUT_S = 30
"""How long a wait for a few more blocks may take before the chain counts as stalled."""
START, STARTS, FINISH, FINISHES = (
    type_url(t)
    for t in (
        tx_pb2.MsgStartInference,
        tx_pb2.MsgStartInferences,
        tx_pb2.MsgFinishInference,
        tx_pb2.MsgFinishInferences,
    )
)
SEQUENCE_MISMATCH = "account sequence mismatch"


def wait_height(rpc: CometRPC, height: int, what: str, timeout_s: float = HEIGHT_TIMEOUT_S) -> int:
    """Wait until the chain has committed ``height``; a stalled chain fails the test with ``what``."""
    deadline = time.monotonic() + timeout_s
    while (current := rpc.height()) < height:
        assert time.monotonic() < deadline, f"{what}: height {height} not reached in {timeout_s}s (at {current})"
        time.sleep(0.1)
    return current


def block_txs(rpc: CometRPC, first: int, last: int) -> list[tuple[str, Tx]]:
    """Every transaction committed in blocks ``first``..``last``: (its signer's address, the decoded tx). The
    entries the proposer injects (x/bls's certificate) are not transactions and are left out."""
    found = []
    for height in range(first, last + 1):
        for encoded in rpc.block(height)["block"]["data"]["txs"] or []:
            entry = base64.b64decode(encoded)
            if entry.startswith(INJECTED_ENTRY_MAGIC):
                continue
            tx = decode_tx(entry)
            pubkey = keys_pb2.PubKey.FromString(tx.auth_info.signer_infos[0].public_key.value).key
            found.append((bech32.encode(secp256k1.address_bytes(pubkey)), tx))
    return found


def executor_status(url: str, condition: Callable[[dict[str, Any]], bool], timeout_s: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        status: dict[str, Any] = httpx.get(f"{url}/v1/executor/status", timeout=10).json()
        if condition(status):
            return status
        assert time.monotonic() < deadline, f"the executor's status is still {status}"
        time.sleep(0.1)


def ready_line(process: subprocess.Popen[str], timeout_s: float) -> dict[str, Any]:
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            line = process.stdout.readline()
            assert line, f"the process exited with {process.wait()} before it was ready"
            return json.loads(line)
        assert process.poll() is None, f"the process exited with {process.returncode}"
    raise AssertionError(f"the process was not ready in {timeout_s}s")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network; ``gonkad executor start`` (key val0, the host) in front of the fake node, its URL registered for
    val0's host; ``gonkad agent start`` (key ``ta``, funded by the faucet) on it."""
    fake = FakeNode("fake", models=(MODEL,), max_concurrency=4)
    for root in running_localnet(tmp_path_factory.mktemp("agent"), SETTINGS):
        spec = localnet.load(root).nodes[0]
        rpc, grpc_addr = spec.rpc, f"127.0.0.1:{spec.grpc_port}"
        chain_args = ["--home", str(root), "--keyring-backend", "test", "--node", rpc]
        ta_key = address_of(Keyring(root, "test").private_key(Keyring(root, "test").add("ta")[0].name))
        sent_ok(
            gonkad("tx", "bank", "send", "faucet", ta_key, "1000000ngonka", *chain_args, "-y", "--output", "json"), rpc
        )
        logs = [(root / "executor.log").open("w"), (root / "agent.log").open("w")]
        processes: list[subprocess.Popen[str]] = []
        with serve(fake) as node_url:
            try:
                processes.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "gonkad",
                            "executor",
                            "start",
                            *chain_args,
                            "--grpc-addr",
                            grpc_addr,
                            "--from",
                            "val0",
                            "--mlnode",
                            node_url,
                            "--port",
                            "0",
                        ],
                        stdout=subprocess.PIPE,
                        stderr=logs[0],
                        text=True,
                    )
                )
                executor = ready_line(processes[0], READY_TIMEOUT_S)
                sent_ok(
                    gonkad(
                        "tx",
                        "inference",
                        "register-node",
                        "node-0",
                        executor["url"],
                        "--models",
                        MODEL,
                        "--max-concurrency",
                        "4",
                        "--from",
                        "val0",
                        *chain_args,
                        "--gas",
                        "400000",
                        "-y",
                        "--output",
                        "json",
                    ),
                    rpc,
                )
                processes.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "gonkad",
                            "agent",
                            "start",
                            *chain_args,
                            "--grpc-addr",
                            grpc_addr,
                            "--from",
                            "ta",
                            "--port",
                            "0",
                            "--ta",
                            "http://ta-2.example",
                        ],
                        stdout=subprocess.PIPE,
                        stderr=logs[1],
                        text=True,
                    )
                )
                ready = ready_line(processes[1], READY_TIMEOUT_S)
                yield {
                    "root": root,
                    "rpc": rpc,
                    "querier": Querier(rpc, grpc_addr),
                    "ta": ready["url"],
                    "ready": ready,
                    "process": processes[1],
                    "fake": fake,
                    "ta_address": ta_key,
                    "executor": executor,
                    "executor_process": processes[0],
                    "host": address_of(localnet.load_key(root, "val0")),
                }
            finally:
                for process in reversed(processes):
                    stop(process)
                for log in logs:
                    log.close()


def client(ta: str, key: secp256k1.PrivateKey, ta_address: str) -> openai.OpenAI:
    http = httpx.Client(auth=SignedRequests(key, ta_address), timeout=30)
    return openai.OpenAI(base_url=f"{ta}/v1", api_key="unused", http_client=http, max_retries=0)


def test_a_signed_chat_request_is_answered_started_and_finished_with_exact_amounts(net: dict[str, Any]) -> None:
    ta, querier, root, host = net["ta"], net["querier"], net["root"], net["host"]
    identity = httpx.get(f"{ta}/v1/identity", timeout=10).json()
    assert verify_identity(identity)
    assert (identity["address"], identity["chain_id"], identity["tas"]) == (
        net["ta_address"],
        "gonka-agent",
        ["http://ta-2.example"],
    )
    assert identity["latest_height"] >= 2
    models = httpx.get(f"{ta}/v1/models", timeout=10).json()["data"]
    assert [(m["id"], m["price_per_token"], m["context_length"]) for m in models] == [(MODEL, PRICE, 1024)]
    assert pid_file(root, "agent").read_text() == str(net["ready"]["pid"])
    assert pid_file(root, "executor").read_text() == str(net["executor"]["pid"])
    assert (net["executor"]["address"], net["executor"]["chain_id"]) == (host, "gonka-agent")

    faucet = localnet.load_key(root, "faucet")
    requester = address_of(faucet)
    before, escrow_before, supply_before = balance(querier, requester), balance(querier, ESCROW), supply(querier)
    host_before, host_vesting_before = balance(querier, host), vesting(querier, host)
    raw = client(ta, faucet, identity["address"]).chat.completions.with_raw_response.create(
        model=MODEL,
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=MAX_TOKENS,
        extra_body={"fee_per_token": FEE},
    )
    answer = raw.parse()
    assert answer.choices[0].message.content == "fake says hi"
    inference_id = raw.headers["x-inference-id"]
    assert len(bytes.fromhex(inference_id)) == 32

    record = finished(querier, inference_id)
    payment = COMPLETION_TOKENS * FEE
    assert record.status == inference_pb2.STATUS_FINISHED
    # the finisher sends only for a record it reads as STARTED (a later block), and a finish after expiry is refused
    assert record.start_height < record.finish_height <= record.expiry_height, record
    assert (record.requester, record.ta, record.executor, record.model) == (requester, net["ta_address"], host, MODEL)
    assert (record.max_tokens, record.fee_per_token, record.escrow, record.denom) == (
        MAX_TOKENS,
        FEE,
        MAX_TOKENS * FEE,
        DENOM,
    )
    assert (record.prompt_tokens, record.completion_tokens, record.payment) == (
        PROMPT_TOKENS,
        COMPLETION_TOKENS,
        payment,
    )
    # the host asks its node for logprobs with TOP_LOGPROBS alternatives (PoC V2), whatever the client asked
    assert (record.response_hash, record.logprobs_digest) == (ANSWER, net["fake"].logprobs_digest(TOP_LOGPROBS))
    assert balance(querier, requester) == before - payment  # escrowed MAX_TOKENS × FEE, the rest refunded
    assert balance(querier, ESCROW) == escrow_before
    assert balance(querier, host) == host_before + payment
    assert vesting(querier, host) == host_vesting_before + payment  # paid through vesting: locked
    assert supply(querier) == supply_before
    assert net["fake"].served[-1]["model"] == MODEL
    status = executor_status(net["executor"]["url"], lambda status: status["pending"] == 0)
    assert (status["address"], status["finished"], status["dropped"]) == (host, 1, 0)  # it saw it FINISHED
    assert status["recent"][-1]["id"] == inference_id and status["recent"][-1]["outcome"] == "finished"
    result = committed(CometRPC(net["rpc"]), status["recent"][-1]["tx"])["tx_result"]  # signed by the host
    assert int(result.get("code", 0)) == 0 and int(result["gas_used"]) < int(result["gas_wanted"])


def test_concurrent_requests_a_stream_and_a_sequence_used_elsewhere(net: dict[str, Any]) -> None:
    """Eight requests at once: the TA's starts go out in transactions at its consecutive sequences, none refused
    for its sequence (the view's lock; several starts may share a ``MsgStartInferences``), every inference is
    finished once, in a transaction the host signed with ``MsgFinishInference``s only (its finisher; how it
    batches them is tests/test_executor.py's), and all are FINISHED with their exact payments. A stream is
    finished too, with the usage the executor asked the node for. Then the TA's key sends a transaction of its
    own outside the TA, so the TA's counted sequence is stale: its next start is refused by CheckTx
    (``sdk/32``), re-signed at the sequence the node expects, and goes through."""
    ta, querier, root, host = net["ta"], net["querier"], net["root"], net["host"]
    rpc = CometRPC(net["rpc"])
    faucet = localnet.load_key(root, "faucet")
    requester = address_of(faucet)
    chat = client(ta, faucet, net["ta_address"])
    before, supply_before = balance(querier, requester), supply(querier)
    first_height, first_sequence = rpc.height() + 1, query_account(rpc, net["ta_address"]).sequence

    def ask(i: int) -> str:
        raw = chat.chat.completions.with_raw_response.create(
            model=MODEL, messages=[{"role": "user", "content": f"question {i}"}], max_tokens=MAX_TOKENS - i
        )
        assert raw.parse().choices[0].message.content == "fake says hi"
        return raw.headers["x-inference-id"]

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(ask, range(8)))
    assert len(set(ids)) == 8
    records = [finished(querier, the_id) for the_id in ids]
    assert [r.escrow for r in records] == [(MAX_TOKENS - i) * PRICE for i in range(8)]
    assert {(r.status, r.completion_tokens, r.payment) for r in records} == {
        (inference_pb2.STATUS_FINISHED, COMPLETION_TOKENS, COMPLETION_TOKENS * PRICE)
    }
    assert balance(querier, requester) == before - 8 * COMPLETION_TOKENS * PRICE
    assert balance(querier, ESCROW) == 0 and supply(querier) == supply_before
    txs = block_txs(rpc, first_height, max(r.finish_height for r in records))
    ta_txs = [tx for signer, tx in txs if signer == net["ta_address"]]
    sequences = [tx.auth_info.signer_infos[0].sequence for tx in ta_txs]
    assert sequences == list(range(first_sequence, first_sequence + len(ta_txs))), sequences
    assert {message.type_url for tx in ta_txs for message in tx.messages} <= {START, STARTS}
    started = [
        start
        for tx in ta_txs
        for message in tx.messages
        for start in (
            [tx_pb2.MsgStartInference.FromString(message.value)]
            if message.type_url == START
            else tx_pb2.MsgStartInferences.FromString(message.value).starts
        )
    ]
    assert sorted(
        id_of_request(bech32.decode(s.requester), s.body_hash, s.timestamp_ns).hex() for s in started
    ) == sorted(ids)  # each started once, by the TA
    finishes = [
        finish
        for signer, tx in txs
        if signer == host
        for message in tx.messages
        for finish in (
            [tx_pb2.MsgFinishInference.FromString(message.value)]
            if message.type_url == FINISH
            else tx_pb2.MsgFinishInferences.FromString(message.value).finishes
        )
    ]
    assert sorted(f.id.hex() for f in finishes) == sorted(ids)  # each finished once, by the host
    assert all({m.type_url for m in tx.messages} <= {FINISH, FINISHES} for signer, tx in txs if signer == host)
    assert SEQUENCE_MISMATCH not in (root / "agent.log").read_text()  # no start was signed at a taken sequence

    with chat.chat.completions.with_streaming_response.create(
        model=MODEL, messages=[{"role": "user", "content": "stream"}], max_tokens=MAX_TOKENS, stream=True
    ) as raw:
        streamed = raw.headers["x-inference-id"]
        chunks = list(raw.parse())
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "fake says hi"
    assert all(c.choices and c.usage is None for c in chunks)  # the usage the executor asked for is not relayed
    record = finished(querier, streamed)
    assert (record.status, record.prompt_tokens, record.completion_tokens, record.response_hash) == (
        inference_pb2.STATUS_FINISHED,
        PROMPT_TOKENS,
        COMPLETION_TOKENS,
        ANSWER,
    )

    logged = len((root / "agent.log").read_text())
    sent_ok(
        gonkad(
            "tx",
            "bank",
            "send",
            "ta",
            requester,
            "1ngonka",
            "--home",
            str(root),
            "--keyring-backend",
            "test",
            "--node",
            net["rpc"],
            "-y",
            "--output",
            "json",
        ),
        net["rpc"],
    )
    middle = balance(querier, requester)
    last = ask(0)
    assert finished(querier, last).payment == COMPLETION_TOKENS * PRICE
    assert balance(querier, requester) == middle - COMPLETION_TOKENS * PRICE
    assert SEQUENCE_MISMATCH in (root / "agent.log").read_text()[logged:]  # the retry happened


def test_an_unfunded_requester_gets_402_and_nothing_is_started(net: dict[str, Any]) -> None:
    ta, querier = net["ta"], net["querier"]
    poor = secp256k1.PrivateKey(hashlib.sha256(b"agent localnet: never funded").digest())
    served = len(net["fake"].served)
    with pytest.raises(openai.APIStatusError) as refused:
        client(ta, poor, net["ta_address"]).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=MAX_TOKENS
        )
    assert refused.value.status_code == 402
    assert refused.value.body["code"] == "insufficient_funds"  # type: ignore[index]
    rpc = CometRPC(net["rpc"])
    wait_height(rpc, rpc.height() + 2, "after the refused request")  # a start would have been committed by now
    started = querier.query(
        QUERY + "Inferences",
        query_pb2.QueryInferencesRequest(requester=address_of(poor)),
        query_pb2.QueryInferencesResponse,
    ).inferences
    assert list(started) == [] and len(net["fake"].served) == served


def test_the_executor_proxy_refuses_unsigned_requests(net: dict[str, Any]) -> None:
    """Straight to the proxy without the requester's signed headers (or with a signature for another body): 401
    with OpenAI's error body; the node serves nothing and the finisher holds nothing."""
    url = net["executor"]["url"]
    status = httpx.get(f"{url}/v1/executor/status", timeout=10).json()
    served = len(net["fake"].served)
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "free?"}]}).encode()
    unsigned = httpx.post(f"{url}/v1/chat/completions", content=body, timeout=10)
    assert unsigned.status_code == 401
    assert unsigned.json()["error"]["code"] == "missing_signature"
    faucet = localnet.load_key(net["root"], "faucet")
    headers = request_headers(faucet, b"{}", net["ta_address"])
    headers.update({"X-TA-Address": net["ta_address"], "X-Inference-Id": "00" * 32})
    forged = httpx.post(f"{url}/v1/chat/completions", content=body, headers=headers, timeout=10)
    assert forged.status_code == 401 and forged.json()["error"]["type"] == "authentication_error"
    assert forged.json()["error"]["code"] == "invalid_signature"
    after = httpx.get(f"{url}/v1/executor/status", timeout=10).json()
    assert (after["pending"], after["finished"], after["refused"]) == (0, status["finished"], status["refused"] + 2)
    assert len(net["fake"].served) == served
    assert httpx.get(f"{url}/v1/node/info", timeout=10).json()["load"]["max_concurrency"] == 4  # passed through


def page_figures(record: inference_pb2.Inference) -> tuple[str, str, str]:
    """An inference's status, escrow and payment as the network page shows them."""
    status = inference_pb2.Status.Name(record.status).removeprefix("STATUS_").lower()
    return status, str(record.escrow), str(record.payment)


def test_the_network_page_shows_a_paid_chat_with_its_payment(net: dict[str, Any], browser: webdriver.Chrome) -> None:
    """The node's network page (gonkad/web over its REST API) in headless Chromium: its inference count is the
    chain's (the one host's, as executor) and each latest inference it lists has the escrow and payment the chain
    records; after one more paid chat it counts one more and lists that inference finished, with its payment."""
    querier, host = net["querier"], net["host"]
    browser.get(f"{localnet.load(net['root']).nodes[0].api}/")
    before = {record.id.hex(): record for record in inferences_of(querier, executor=host)}
    page_agrees(browser, lambda: {"#inference-count": str(len(before))}, timeout_s=30)
    listed = rows(browser, "#inference-rows")
    assert listed  # the earlier tests' chats
    assert [(row["status"], row["escrow"], row["payment"]) for row in listed] == [
        page_figures(before[row["inference"]]) for row in listed
    ]

    faucet = localnet.load_key(net["root"], "faucet")
    inference_id = (
        client(net["ta"], faucet, net["ta_address"])
        .chat.completions.with_raw_response.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=MAX_TOKENS,
            extra_body={"fee_per_token": FEE},
        )
        .headers["x-inference-id"]
    )
    record = finished(querier, inference_id)
    assert (record.status, record.escrow, record.payment) == (
        inference_pb2.STATUS_FINISHED,
        MAX_TOKENS * FEE,
        COMPLETION_TOKENS * FEE,
    )
    status, escrow, payment = page_figures(record)
    row = f'tr[data-inference="{inference_id}"]'
    page_agrees(
        browser,
        lambda: {
            "#inference-count": str(len(before) + 1),
            f'{row} td[data-field="status"]': status,
            f'{row} td[data-field="escrow"]': escrow,
            f'{row} td[data-field="payment"]': payment,
        },
    )


def test_the_agent_and_the_executor_stop_cleanly_on_sigterm(net: dict[str, Any]) -> None:
    for process, name in ((net["process"], "agent"), (net["executor_process"], "executor")):
        assert process.poll() is None
        process.terminate()
        assert process.wait(timeout=15) == 0
        assert not pid_file(net["root"], name).exists()
    assert "executor stopped" in (net["root"] / "executor.log").read_text()
