"""The whole inference network as ``make localnet`` brings it up (``localnet/settings.toml`` with its
``[services]``): 4 validators, an ML node (tiny preset, a real model) on hosts val0 and val1 behind each one's
``gonkad executor start``, registered on chain at genesis with the preset's model, and two ``gonkad agent
start`` TAs. Requests come from the official ``openai`` client through the SDK (``gonka.Gonka``) or, for the
refusals, as raw signed HTTP.

The genesis sets the rewards' issuance cap to 0 and an epoch of 100,000 blocks, so nothing is minted and
nothing vests out while the amounts are compared. TA queues hold 12 requests (``ta_queue_bound``).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from chain_reads import QUERY, balance, check_accounting, finished, fund, gonkad, inferences_of, supply, vesting
from nodes import running_localnet

from gonka import Gonka
from gonkad import genesis, localnet, localnet_services
from gonkad.localnet_services import ServiceSpec
from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.signing import request_headers
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from sdk.crypto.merkle import verify_inclusion
from sdk.crypto.request import inference_id as request_id
from x.inference.work import work_leaf

QUEUE_BOUND = 12
FILL_TOKENS = 480
"""A long request: with the prompt, the tiny model's whole context of 512."""
OVERRIDES = {"rewards": {"params": {"issuance_cap": "0"}}, "epochs": {"params": {"epoch_length": "100000"}}}
_base = localnet.load_settings(validators=4, chain_id="gonka-inference", with_services=True)
assert _base.services is not None and _base.services.transfer_agents == 2
SETTINGS = _base.model_copy(
    update={
        "genesis": genesis.merge_overrides(_base.genesis, OVERRIDES),
        "services": _base.services.model_copy(
            update={"ml_nodes": 2, "ta_queue_bound": QUEUE_BOUND, "max_tokens_limit": FILL_TOKENS}
        ),
    }
)
PRICE = SETTINGS.services.price_per_token_ngonka  # type: ignore[union-attr]
ESCROW = bech32.encode(module_address("inference"))
FUNDS = 10**12
"""What each test's requester key gets from the faucet."""


def key(name: str) -> secp256k1.PrivateKey:
    return secp256k1.PrivateKey(hashlib.sha256(b"inference localnet: " + name.encode()).digest())


REQUESTERS = ("chat", "refusals", "filler", "bidder", "ta-kill", "node-kill")


@dataclass
class Net:
    root: Path
    spec: localnet.LocalnetSpec
    querier: Querier

    @property
    def services(self) -> localnet_services.ServicesSpec:
        assert self.spec.services is not None
        return self.spec.services

    @property
    def model(self) -> str:
        return self.services.model

    @property
    def tas(self) -> list[ServiceSpec]:
        return self.services.of("agent")

    def sdk(self, requester: str, tas: list[ServiceSpec] | None = None, **options: Any) -> Gonka:
        return Gonka([ta.url for ta in tas or self.tas], key(requester), **options)


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Net]:
    """The network, running and serving (``localnet.start`` waits until every TA sees both ML nodes), with a
    funded key per test."""
    for root in running_localnet(tmp_path_factory.mktemp("inference"), SETTINGS):
        spec = localnet.load(root)
        node = spec.nodes[0]
        querier = Querier(node.rpc, f"127.0.0.1:{node.grpc_port}")
        fund(querier, localnet.load_key(root, "faucet"), spec.chain_id, [address_of(key(n)) for n in REQUESTERS], FUNDS)
        yield Net(root, spec, querier)


def chat(client: Gonka, model: str, content: str, max_tokens: int = 8, **extra: Any) -> tuple[Any, str]:
    """One chat answer and its inference id."""
    raw = client.chat.completions.with_raw_response.create(
        model=model,
        messages=[{"role": "user", "content": content}],
        max_tokens=max_tokens,
        temperature=0,
        extra_body=extra or None,
    )
    return raw.parse(), raw.headers["x-inference-id"]


def all_finished(net: Net, ids: list[str], timeout_s: float = 60) -> list[inference_pb2.Inference]:
    return [finished(net.querier, the_id, timeout_s) for the_id in ids]


def charged_once(net: Net, requester: str, ids: list[str]) -> list[inference_pb2.Inference]:
    """The requester's inferences are exactly ``ids`` (each answered once), all FINISHED, each paid for its
    own tokens, and the requester's balance went down by exactly the sum: nothing charged twice or left held."""
    address = address_of(key(requester))
    assert len(set(ids)) == len(ids)
    records = all_finished(net, ids)
    assert sorted(r.id.hex() for r in inferences_of(net.querier, address)) == sorted(ids)
    assert all(r.status == inference_pb2.STATUS_FINISHED for r in records)
    assert all(
        r.payment == r.completion_tokens * r.fee_per_token and 0 < r.completion_tokens <= r.max_tokens for r in records
    )
    assert balance(net.querier, address) == FUNDS - sum(r.payment for r in records)
    return records


def ta_status(ta: ServiceSpec) -> dict[str, Any]:
    status: dict[str, Any] = httpx.get(f"{ta.url}/v1/status", timeout=10).json()
    return status


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def kill(service: ServiceSpec) -> None:
    pid = localnet_services.pid(service)
    assert pid is not None, f"{service.name} is not running"
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: localnet_services.pid(service) is None, f"{service.name} to go down")


def test_the_network_is_on_chain_and_listed(net: Net) -> None:
    """``gonkad localnet status`` lists every ML node, executor and TA; the chain has the model and both
    hosts' nodes at their executors' URLs; the TAs announce each other."""
    status = json.loads(gonkad("localnet", "status", "--home", str(net.root)).stdout)
    assert status["model"] == net.model and net.model.startswith("tiny-seed0@sha256:")
    assert [m["name"] for m in status["ml_nodes"]] == ["mlnode0", "mlnode1"]
    assert all(m["pid"] and m["executor"]["pid"] for m in status["ml_nodes"])
    assert [(t["name"], t["url"]) for t in status["transfer_agents"]] == [(t.name, t.url) for t in net.tas]
    identity = httpx.get(net.services.of("mlnode")[0].url + "/v1/models", timeout=10).json()["data"][0]["identity"]
    assert identity == net.model  # the model registered on chain is the node's own identity
    nodes = net.querier.query(QUERY + "Nodes", query_pb2.QueryNodesRequest(), query_pb2.QueryNodesResponse).nodes
    executors = net.services.of("executor")
    assert sorted((n.operator, n.url, tuple(n.models)) for n in nodes) == sorted(
        (e.address, e.url, (net.model,)) for e in executors
    )
    assert httpx.get(net.tas[0].url + "/v1/identity", timeout=10).json()["tas"] == [net.tas[1].url]


def test_chat_and_stream_through_the_sdk_are_answered_and_paid_exactly(net: Net) -> None:
    """The ``openai`` client through the SDK (TAs discovered, the model listed) gets a chat answer, the ML node's
    own (asked directly, greedy: the same text), and a stream. On chain both are FINISHED with the node's token
    counts and the hash of the text the client got; the requester paid exactly the tokens produced × the price
    (escrowed max_tokens × price, the rest refunded), each host's balance and locked (vesting) coins grew by
    its payments, the escrow account is back where it was, the supply is unchanged, and the answer's work is
    in its host's epoch root with an inclusion proof that verifies."""
    querier = net.querier
    hosts = [e.address for e in net.services.of("executor")]
    held_before, supply_before = balance(querier, ESCROW), supply(querier)
    hosts_before = {h: (balance(querier, h), vesting(querier, h)) for h in hosts}
    with net.sdk("chat") as client:
        assert sorted(ta.address for ta in client.tas) == sorted(ta.address for ta in net.tas)
        assert [m.id for m in client.models.list().data] == [net.model]
        answer, answered = chat(client, net.model, "Hello, Gonka!", max_tokens=24)
        with client.chat.completions.with_streaming_response.create(
            model=net.model,
            messages=[{"role": "user", "content": "stream, please"}],
            max_tokens=20,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        ) as raw:
            streamed = raw.headers["x-inference-id"]
            chunks = list(raw.parse())
    text = answer.choices[0].message.content
    direct = httpx.post(
        net.services.of("mlnode")[0].url + "/v1/chat/completions",
        timeout=30,
        json={
            "model": net.model,
            "messages": [{"role": "user", "content": "Hello, Gonka!"}],
            "max_tokens": 24,
            "temperature": 0,
        },
    ).json()
    assert text == direct["choices"][0]["message"]["content"]  # the ML node's own answer, relayed unchanged
    stream_text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    usage = chunks[-1].usage
    assert usage is not None and stream_text

    first, second = records = charged_once(net, "chat", [answered, streamed])
    assert (first.prompt_tokens, first.completion_tokens) == (
        answer.usage.prompt_tokens,
        answer.usage.completion_tokens,
    )
    assert (second.prompt_tokens, second.completion_tokens) == (usage.prompt_tokens, usage.completion_tokens)
    assert first.response_hash == hashlib.sha256(text.encode()).digest()
    assert second.response_hash == hashlib.sha256(stream_text.encode()).digest()
    assert {r.fee_per_token for r in records} == {PRICE} and first.escrow == 24 * PRICE
    assert {r.ta for r in records} <= {ta.address for ta in net.tas} and {r.executor for r in records} <= set(hosts)
    for host in hosts:  # paid through vesting: in the balance, locked
        paid = sum(r.payment for r in records if r.executor == host)
        assert (balance(querier, host), vesting(querier, host)) == (
            hosts_before[host][0] + paid,
            hosts_before[host][1] + paid,
        )
    assert balance(querier, ESCROW) == held_before and supply(querier) == supply_before

    proof = querier.query(
        QUERY + "WorkProof", query_pb2.QueryWorkProofRequest(id=answered), query_pb2.QueryWorkProofResponse
    )
    work = querier.query(
        QUERY + "EpochWork",
        query_pb2.QueryEpochWorkRequest(epoch=first.epoch, host=first.executor),
        query_pb2.QueryEpochWorkResponse,
    ).work
    assert (proof.host, proof.epoch, proof.root) == (first.executor, first.epoch, work.root)
    assert work.count >= 1 and work.units >= first.prompt_tokens + first.completion_tokens
    assert proof.leaf == work_leaf(first)
    assert verify_inclusion(work.root, proof.leaf, proof.index, proof.total, list(proof.proof))


def test_refused_requests_get_openai_errors_and_are_not_charged(net: Net) -> None:
    """Bad signature, a signature for the other TA, a stale timestamp, a replayed request: 401; a requester
    with no funds: 402; a validly signed request sent straight to a host's executor, with no start on chain
    behind it: 402 ``unpaid``, and its ML node never sees it. Each is OpenAI's error body, and only the one
    valid request is on chain and paid."""
    ta, other = net.tas
    requester = key("refusals")
    body = json.dumps(
        {"model": net.model, "messages": [{"role": "user", "content": "refuse me"}], "max_tokens": 8}
    ).encode()

    def post(headers: dict[str, str], content: bytes = body) -> httpx.Response:
        return httpx.post(
            f"{ta.url}/v1/chat/completions",
            content=content,
            timeout=30,
            headers={**headers, "Content-Type": "application/json"},
        )

    valid = request_headers(requester, body, ta.address)
    cases = {
        "invalid_signature": post(request_headers(requester, b"another body", ta.address)),
        "wrong TA": post(request_headers(requester, body, other.address)),
        "stale_timestamp": post(request_headers(requester, body, ta.address, time.time_ns() - 120 * 10**9)),
    }
    answered = post(valid)
    assert answered.status_code == 200, answered.text
    cases["replayed_request"] = post(valid)
    for case, response in cases.items():
        error = response.json()["error"]
        assert response.status_code == 401 and error["type"] == "authentication_error", (case, response.text)
        assert error["code"] == ("invalid_signature" if case == "wrong TA" else case) and error["message"]
    executor = net.services.of("executor")[0]
    served_before = httpx.get(executor.url + "/v1/executor/status", timeout=10).json()
    direct = body.replace(b"refuse me", b"serve me for free")
    signed = request_headers(requester, direct, ta.address)
    bypass = httpx.post(
        f"{executor.url}/v1/chat/completions",
        content=direct,
        timeout=30,
        headers={
            **signed,
            "Content-Type": "application/json",
            "X-TA-Address": ta.address,
            "X-Inference-Id": request_id(
                bech32.decode(address_of(requester)), hashlib.sha256(direct).digest(), int(signed["X-Timestamp"])
            ).hex(),
        },
    )
    assert bypass.status_code == 402 and bypass.json()["error"]["code"] == "unpaid", bypass.text
    served_after = httpx.get(executor.url + "/v1/executor/status", timeout=10).json()
    assert (served_after["served"], served_after["unpaid"]) == (served_before["served"], served_before["unpaid"] + 1)
    poor = secp256k1.PrivateKey(hashlib.sha256(b"inference localnet: never funded").digest())
    broke = post(request_headers(poor, body, ta.address))
    assert broke.status_code == 402 and broke.json()["error"]["code"] == "insufficient_funds", broke.text
    charged_once(net, "refusals", [answered.headers["x-inference-id"]])
    assert inferences_of(net.querier, address_of(poor)) == []


def test_higher_fees_finish_first_when_the_nodes_are_saturated_and_a_full_queue_is_429(net: Net) -> None:
    """Eight long requests fill both nodes' four slots through TA 0; then twelve short ones arrive together, four
    each with fees 10, 30 and 50 (the model's price is 10), and wait in its queue, now full: the next one is
    429 with Retry-After. As slots free, the queue hands them out by fee: what it promises is the order it
    dispatches in, and the TA starts each on chain when it is dispatched, its starts in order (one sequence after
    another), so every fee-50 request is started in a block no later than any fee-10 one. Eight slots for twelve
    bids: at least four start only after a bid finished, in a later block, so the order has blocks to show in
    (in arrival order fee-10 bids would be among the first). How long each then runs on which node is not the
    queue's to promise. All are paid at their own fee; the refused one is not on chain."""
    ta = net.tas[0]
    wait_for(lambda: ta_status(ta)["in_flight"] == 0 and ta_status(ta)["queue"] == 0, "an idle TA")
    fillers = net.sdk("filler", [ta], max_retries=0)
    bidders = net.sdk("bidder", [ta], max_retries=0)
    fees = [10, 30, 50] * (QUEUE_BOUND // 3)
    bid_ids: dict[int, str] = {}
    """Bid → its inference id."""
    ids: dict[str, list[str]] = {"filler": [], "bidder": []}
    lock = threading.Lock()

    def fill(i: int) -> None:
        answer, the_id = chat(fillers, net.model, f"fill {i}", max_tokens=FILL_TOKENS)
        assert answer.choices[0].finish_reason == "length"  # it held its slot for all its tokens
        with lock:
            ids["filler"].append(the_id)

    def bid(i: int) -> None:
        _, the_id = chat(bidders, net.model, f"bid {i}", max_tokens=8, fee_per_token=fees[i])
        with lock:
            bid_ids[i] = the_id
            ids["bidder"].append(the_id)

    with fillers, bidders, ThreadPoolExecutor(8 + QUEUE_BOUND) as pool:
        filling = [pool.submit(fill, i) for i in range(8)]
        wait_for(lambda: ta_status(ta)["in_flight"] == 8, "eight requests on the nodes")
        bids = [pool.submit(bid, i) for i in range(QUEUE_BOUND)]
        wait_for(lambda: ta_status(ta)["queue"] == QUEUE_BOUND, "every bid in the queue", 10)
        assert ta_status(ta)["in_flight"] == 8 and not bid_ids  # still saturated: nothing ran yet
        with pytest.raises(openai.RateLimitError) as full:
            chat(bidders, net.model, "one too many", max_tokens=8, fee_per_token=50)
        assert full.value.response.headers["retry-after"] == "1"
        assert full.value.body["code"] == "rate_limit_exceeded"  # type: ignore[index]
        for future in [*filling, *bids]:
            future.result()
    records = charged_once(net, "bidder", ids["bidder"])
    assert sorted(r.fee_per_token for r in records) == sorted(fees)
    started = {r.id.hex(): r.start_height for r in records}
    by_fee = {fee: [started[bid_ids[i]] for i in range(QUEUE_BOUND) if fees[i] == fee] for fee in (10, 30, 50)}
    assert max(by_fee[50]) <= min(by_fee[10]), by_fee
    assert len(set(started.values())) > 1, started  # the bids were dispatched over several blocks
    charged_once(net, "filler", ids["filler"])


def load(client: Gonka, model: str, count: int, during: Callable[[int], None]) -> list[str]:
    """``count`` chat requests from ``QUEUE_BOUND`` threads (so a TA's queue never overflows, even while it still
    counts a killed TA's requests on the nodes); ``during(answered)`` runs after each answer (one at a time).
    Every request must be answered (200) exactly once; returns their inference ids."""
    lock = threading.Lock()
    answered: list[str] = []

    def one(i: int) -> None:
        answer, the_id = chat(client, model, f"request {i} of the load", max_tokens=6 + i % 5)
        assert answer.choices[0].message.content is not None
        with lock:
            answered.append(the_id)
            during(len(answered))

    with ThreadPoolExecutor(QUEUE_BOUND) as pool:
        for future in [pool.submit(one, i) for i in range(count)]:
            future.result()
    return answered


def test_a_ta_killed_mid_load_fails_over_and_every_request_is_answered_and_charged_once(net: Net) -> None:
    """200 requests through the SDK, TA 0 first; at the 40th answer TA 0 is SIGKILLed. The SDK sends what it had
    in flight there to TA 1 with the same inference id (TA 1 asks the host the chain names for it): all 200 are
    answered once, and the chain holds exactly 200 inferences, each FINISHED and paid once."""
    ta0, ta1 = net.tas
    killed = threading.Event()

    def maybe_kill(answered: int) -> None:
        if answered == 40:
            kill(ta0)
            killed.set()

    try:
        with net.sdk("ta-kill") as client:
            ids = load(client, net.model, 200, maybe_kill)
        assert killed.is_set() and len(ids) == 200
        records = charged_once(net, "ta-kill", ids)
        by_ta = {ta.address: sum(r.ta == ta.address for r in records) for ta in (ta0, ta1)}
        # TA 0 started at least the 40 answered before the kill; of the rest, at most what the threads had in
        # flight then can have stayed with it (answered by it just before, or its start committed last)
        assert by_ta[ta0.address] >= 40 and by_ta[ta1.address] >= 200 - 40 - QUEUE_BOUND, by_ta
    finally:
        localnet.start(net.root)  # TA 0 back (the others run): the next test finds the network whole
    assert localnet_services.pid(ta0) is not None


def test_an_ml_node_killed_mid_load_has_its_requests_retried_elsewhere(net: Net) -> None:
    """100 requests through TA 0; at the 30th answer ML node 1 is SIGKILLed. Its executor answers 502 for what
    it had in flight, the TA reassigns those on chain and sends them to host 0's node: all 100 are answered
    once and charged once, the TA counts the retries and marks the node dead, and after the kill only host 0
    executes."""
    ta = net.tas[0]
    mlnode1 = net.services.of("mlnode")[1]
    host0, host1 = (e.address for e in net.services.of("executor"))
    metrics_before = httpx.get(f"{ta.url}/metrics", timeout=10).text
    killed_at: list[int] = []

    def maybe_kill(answered: int) -> None:
        if answered == 30:
            kill(mlnode1)
            killed_at.append(answered)

    try:
        with net.sdk("node-kill", [ta], max_retries=0) as client:
            ids = load(client, net.model, 100, maybe_kill)
        records = charged_once(net, "node-kill", ids)
        assert killed_at and {r.ta for r in records} == {ta.address}
        executors = [r.executor for r in sorted(records, key=lambda r: (r.start_height, r.finish_height))]
        assert host1 in executors[:40] and set(executors[-40:]) == {host0}
        retries = [
            int(line.split()[1])
            for text in (metrics_before, httpx.get(f"{ta.url}/metrics", timeout=10).text)
            for line in text.splitlines()
            if line.startswith("gonka_ta_retries_total ")
        ]
        assert retries[1] > retries[0], retries
        assert [n["state"] for n in ta_status(ta)["nodes"] if n["operator"] == host1] == ["dead"]
    finally:
        localnet.start(net.root)  # ML node 1 back; start waits until every TA sees it alive again
    assert all(n["state"] == "alive" for n in ta_status(ta)["nodes"])


def test_every_host_was_paid_for_every_answer_it_served_and_the_supply_is_whole(net: Net) -> None:
    """Last, after every test above on this network (the killed TA and ML node included): the accounting of the
    whole run (``chain_reads.check_accounting``)."""
    check_accounting(
        net.querier, [(e.address, e.url) for e in net.services.of("executor")], SETTINGS.total_supply_ngonka
    )
