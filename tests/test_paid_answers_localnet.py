"""A host serves an answer only when the chain is certain to pay for it, and a requester gets at most one answer
per payment: the attacks that once got answers for free, tried on the whole inference network (2 validators, an
ML node behind its host's executor on each, two TAs), then a seeded random mix of concurrent requests, sends,
take-overs and failovers from one requester through both TAs, then the accounting of the whole run.

The attacker is a requester running a TA of its own (``rogue``): it signs its requests for its own address, signs
the starts (or reassignments) it likes and sends them with the request straight to a host's executor, as a TA
does (``X-Start-Tx``). The genesis sets the rewards' issuance cap to 0 and an epoch of 100,000 blocks, so the
supply is the genesis total throughout.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from chain_reads import balance, check_accounting, finished, fund, inferences_of
from google.protobuf.message import Message
from nodes import running_localnet

from gonkad import genesis, localnet
from gonkad.localnet_services import ServiceSpec
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.signing import request_headers
from sdk.client.txbuilder import address_of, query_account, send_msg, sign_tx
from sdk.coins import make_coins
from sdk.crypto import bech32, secp256k1
from sdk.http.signed import forward_headers, signed_headers, verify_signed
from x.inference.client import parse_terms

OVERRIDES = {"rewards": {"params": {"issuance_cap": "0"}}, "epochs": {"params": {"epoch_length": "100000"}}}
_base = localnet.load_settings(validators=2, chain_id="gonka-paid", with_services=True)
assert _base.services is not None and _base.hosts == 2 and _base.services.transfer_agents == 2
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
PRICE = SETTINGS.services.price_per_token_ngonka  # type: ignore[union-attr]
FUNDS = 10**12
ROGUE = secp256k1.PrivateKey(hashlib.sha256(b"paid answers: rogue").digest())
"""The attacker: a requester and its own TA (it signs its requests for its own address)."""


def key(name: str) -> secp256k1.PrivateKey:
    return secp256k1.PrivateKey(hashlib.sha256(b"paid answers: " + name.encode()).digest())


FUNDED = {"rogue": ROGUE, "chat": key("chat"), "random": key("random"), "drain": key("drain")}


@dataclass
class Net:
    root: Path
    spec: localnet.LocalnetSpec
    querier: Querier
    rpc: CometRPC
    lock: threading.Lock = field(default_factory=threading.Lock)
    """One transaction at a time per signer: the tests' own sends and starts count sequences from the chain."""

    @property
    def model(self) -> str:
        assert self.spec.services is not None
        return self.spec.services.model

    def services(self, kind: str) -> list[ServiceSpec]:
        assert self.spec.services is not None
        return self.spec.services.of(kind)  # type: ignore[arg-type]

    @property
    def tas(self) -> list[ServiceSpec]:
        return self.services("agent")

    @property
    def executors(self) -> list[ServiceSpec]:
        return self.services("executor")

    def broadcast(self, signer: secp256k1.PrivateKey, *messages: Message) -> tuple[dict[str, Any], bytes]:
        """Sign ``messages`` at the signer's next sequence (from the chain, and the mempool's own count) and send
        them (sync); (CheckTx's answer, the transaction)."""
        with self.lock:
            account = query_account(self.rpc, address_of(signer))
            for sequence in range(account.sequence, account.sequence + 20):
                raw = sign_tx(
                    signer, list(messages), SETTINGS.chain_id, account.account_number, sequence, gas_limit=400_000
                )
                result = self.rpc.broadcast_tx_sync(raw)
                if "sequence" not in str(result.get("log", "")):
                    return result, raw
        raise AssertionError(f"no sequence of {address_of(signer)} was taken")

    def committed(self, raw: bytes, timeout_s: float = 30) -> dict[str, Any]:
        """The result of transaction ``raw`` once it is in a block."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return dict(self.rpc.tx(hashlib.sha256(raw).digest())["tx_result"])
            except RPCError:
                assert time.monotonic() < deadline, "the transaction is not in a block"
                time.sleep(0.1)

    def record(self, inference_id: bytes) -> inference_pb2.Inference | None:
        try:
            return self.querier.query(
                "/gonka.inference.v1.Query/Inference",
                query_pb2.QueryInferenceRequest(id=inference_id.hex()),
                query_pb2.QueryInferenceResponse,
            ).inference
        except RPCError:
            return None


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Net]:
    for root in running_localnet(tmp_path_factory.mktemp("paid"), SETTINGS):
        spec = localnet.load(root)
        node = spec.nodes[0]
        querier = Querier(node.rpc, f"127.0.0.1:{node.grpc_port}")
        faucet = localnet.load_key(root, "faucet")
        fund(querier, faucet, spec.chain_id, [address_of(signer) for signer in FUNDED.values()], FUNDS)
        yield Net(root, spec, querier, CometRPC(node.rpc))


# --- the attacker's tools -------------------------------------------------------------------------------------


@dataclass
class Signed:
    """A chat request signed by ``requester`` for the TA at ``ta`` at ``timestamp_ns``."""

    requester: secp256k1.PrivateKey
    ta: str
    body: bytes
    timestamp_ns: int
    headers: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.headers = request_headers(self.requester, self.body, self.ta, self.timestamp_ns)

    @property
    def requester_view(self) -> Any:
        parsed = {name.lower().encode(): value.encode() for name, value in self.headers.items()}
        return verify_signed(*signed_headers(parsed), self.body, bech32.decode(self.ta))

    @property
    def inference_id(self) -> bytes:
        return bytes(self.requester_view.inference_id)

    def start(self, executor: str, max_tokens: int | None = None, fee: int = PRICE) -> tx_pb2.MsgStartInference:
        """The start an honest TA would send for this request, ``max_tokens`` overriding the body's."""
        terms = parse_terms(json.loads(self.body))
        tokens = max_tokens or terms.max_tokens or 256
        assert terms.seed is not None
        return tx_pb2.MsgStartInference(
            ta=self.ta,
            requester=address_of(self.requester),
            requester_pubkey=self.requester.public_key,
            body_hash=hashlib.sha256(self.body).digest(),
            timestamp_ns=self.timestamp_ns,
            signature=self.requester_view.signature,
            model=terms.model,
            max_tokens=tokens,
            fee_per_token=fee,
            executor=executor,
            seed=terms.seed,
            params_hash=terms.params_hash(terms.max_tokens or tokens, terms.seed),
        )

    def to_executor(self, executor: ServiceSpec, start_tx: bytes, timeout_s: float = 60) -> httpx.Response:
        """The request sent straight to a host's executor, as a TA forwards it, with ``start_tx``."""
        lines = forward_headers(self.requester_view, self.ta, None, start_tx).decode().strip().split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines)
        return httpx.post(
            f"{executor.url}/v1/chat/completions",
            content=self.body,
            timeout=timeout_s,
            headers={**headers, "Content-Type": "application/json"},
        )

    def through(self, ta: ServiceSpec, timeout_s: float = 60) -> httpx.Response:
        """The request through a TA (signed for it: ``ta`` must be that TA's address)."""
        assert ta.address == self.ta
        return httpx.post(
            f"{ta.url}/v1/chat/completions",
            content=self.body,
            timeout=timeout_s,
            headers={**self.headers, "Content-Type": "application/json"},
        )


def body(net: Net, content: str, max_tokens: int = 8, **extra: Any) -> bytes:
    return json.dumps(
        {
            "model": net.model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            "seed": 11,
            "temperature": 0,
            **extra,
        }
    ).encode()


def status(executor: ServiceSpec) -> dict[str, Any]:
    document: dict[str, Any] = httpx.get(f"{executor.url}/v1/executor/status", timeout=10).json()
    return document


def paid_or_absent(net: Net, response: httpx.Response, inference_id: bytes) -> None:
    """The one rule: an answer (200) is FINISHED and paid on chain; anything else has no payment."""
    if response.status_code == 200:
        record = finished(net.querier, inference_id.hex(), 60)
        assert record.status == inference_pb2.STATUS_FINISHED and record.payment > 0, record
    else:
        record = net.record(inference_id)
        assert record is None or record.status != inference_pb2.STATUS_FINISHED, record


# --- the attacks, one by one ------------------------------------------------------------------------------------


def test_a_reassignment_of_an_inference_never_started_gets_no_answer(net: Net) -> None:
    """Once a ``MsgReassignInference`` that CheckTx took (it runs no state rule) was enough: the reassignment
    failed in its block (``inference/13``) and the answer was free. The host answers only what the chain
    committed for it."""
    broke = key("broke")  # holds nothing at all
    request = Signed(broke, address_of(ROGUE), body(net, "reassigned from nowhere"), time.time_ns())
    host = net.executors[0]
    reassign = tx_pb2.MsgReassignInference(ta=address_of(ROGUE), id=request.inference_id, executor=host.address)
    checked, raw = net.broadcast(ROGUE, reassign)
    assert int(checked.get("code", 0)) == 0, checked  # CheckTx takes it
    before = status(host)
    response = request.to_executor(host, raw)
    assert response.status_code == 402 and response.json()["error"]["code"] == "unpaid", response.text
    result = net.committed(raw)
    assert (result.get("codespace"), int(result.get("code", 0))) == ("inference", 13), result
    after = status(host)
    assert (after["served"], after["unpaid"]) == (before["served"], before["unpaid"] + 1)
    assert net.record(request.inference_id) is None


def test_funds_spent_in_the_same_block_buy_no_answer(net: Net) -> None:
    """The requester sends its whole balance, then has its start sent: the start is refused in the block, so the
    host must not have answered. Whatever order the block takes them in, an answer is paid and a refusal is
    not."""
    drainer = FUNDED["drain"]
    funds = balance(net.querier, address_of(drainer))
    request = Signed(drainer, address_of(ROGUE), body(net, "paid with money already gone"), time.time_ns())
    host = net.executors[0]
    send = send_msg(address_of(drainer), address_of(ROGUE), make_coins([("ngonka", funds)]))
    sent, send_raw = net.broadcast(drainer, send)
    assert int(sent.get("code", 0)) == 0, sent
    checked, start_raw = net.broadcast(ROGUE, request.start(host.address))
    assert int(checked.get("code", 0)) == 0, checked
    response = request.to_executor(host, start_raw)
    send_result, start_result = net.committed(send_raw), net.committed(start_raw)
    if response.status_code == 200:  # the start came first: escrowed, answered, paid, and the send refused
        assert int(start_result.get("code", 0)) == 0 and int(send_result.get("code", 0)) != 0
    else:
        assert response.status_code == 402 and response.json()["error"]["code"] == "unpaid", response.text
        assert (start_result.get("codespace"), int(start_result.get("code", 0))) == ("sdk", 5), start_result
        assert int(send_result.get("code", 0)) == 0
    paid_or_absent(net, response, request.inference_id)


@pytest.mark.parametrize("value", [1, "true", "yes"])
def test_a_stream_that_is_not_a_boolean_is_a_400_and_starts_nothing(net: Net, value: Any) -> None:
    ta = net.tas[0]
    request = Signed(FUNDED["chat"], ta.address, body(net, f"stream {value!r}", stream=value), time.time_ns())
    response = request.through(ta)
    assert response.status_code == 400 and response.json()["error"]["param"] == "stream", response.text
    time.sleep(1)  # a start would be in a block by now
    assert net.record(request.inference_id) is None


def test_a_take_over_by_the_requesters_own_ta_cannot_void_the_answer_in_flight(net: Net) -> None:
    """A long answer through TA 0 from host A; while it streams, the requester signs the same request for its own
    TA and starts it naming host B. Inside A's window the take-over is refused in its block (``inference/20``),
    B refuses to answer, and A's finish pays A."""
    ta = net.tas[0]
    requester = FUNDED["chat"]
    stamp = time.time_ns()
    text = body(net, "a long answer to take over", max_tokens=200)
    honest = Signed(requester, ta.address, text, stamp)
    answers: list[httpx.Response] = []
    through = threading.Thread(target=lambda: answers.append(honest.through(ta, timeout_s=120)))
    through.start()
    record = None
    deadline = time.monotonic() + 30
    while record is None:
        assert time.monotonic() < deadline, "the honest start is not on chain"
        record = net.record(honest.inference_id)
        time.sleep(0.05)
    first = next(e for e in net.executors if e.address == record.executor)
    other = next(e for e in net.executors if e.address != record.executor)
    rogue = Signed(requester, address_of(ROGUE), text, stamp)
    assert rogue.inference_id == honest.inference_id
    checked, raw = net.broadcast(ROGUE, rogue.start(other.address))
    assert int(checked.get("code", 0)) == 0, checked
    refused = rogue.to_executor(other, raw)
    assert refused.status_code == 402, refused.text
    result = net.committed(raw)
    assert (result.get("codespace"), int(result.get("code", 0))) == ("inference", 20), result
    through.join(120)
    assert answers and answers[0].status_code == 200, answers
    done = finished(net.querier, honest.inference_id.hex(), 60)
    assert (done.status, done.executor) == (inference_pb2.STATUS_FINISHED, first.address)
    assert done.payment == done.completion_tokens * PRICE > 0


def test_a_timestamp_the_chain_would_refuse_is_refused_by_the_ta(net: Net) -> None:
    """29.8 s ahead: inside the chain's 30 s, but not where the start lands (its block's time trails the TA's
    clock); the TA's window is the chain's less 10 s, so it refuses it at once. Straight to a host with a start of
    its own, it is answered only if the chain took the start."""
    ta = net.tas[1]
    ahead = time.time_ns() + 29_800_000_000
    request = Signed(FUNDED["chat"], ta.address, body(net, "from the future"), ahead)
    refused = request.through(ta)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "stale_timestamp", refused.text
    rogue = Signed(FUNDED["chat"], address_of(ROGUE), body(net, "from the future, again"), ahead)
    host = net.executors[1]
    checked, raw = net.broadcast(ROGUE, rogue.start(host.address))
    assert int(checked.get("code", 0)) == 0, checked
    response = rogue.to_executor(host, raw)
    result = net.committed(raw)
    assert (response.status_code == 200) == (int(result.get("code", 0)) == 0), (response.text, result)
    paid_or_absent(net, response, rogue.inference_id)


def test_a_start_for_one_token_does_not_buy_two_hundred(net: Net) -> None:
    """The requester's TA escrows 1 token for a body that asks 200: the host refuses the body (402
    ``terms_mismatch``), its node answers nothing, and the start expires refunded."""
    request = Signed(
        FUNDED["chat"], address_of(ROGUE), body(net, "two hundred for one", max_tokens=200), time.time_ns()
    )
    host = net.executors[0]
    before = status(host)
    checked, raw = net.broadcast(ROGUE, request.start(host.address, max_tokens=1))
    assert int(checked.get("code", 0)) == 0, checked
    response = request.to_executor(host, raw)
    assert response.status_code == 402 and response.json()["error"]["code"] == "terms_mismatch", response.text
    assert int(net.committed(raw).get("code", 0)) == 0
    record = net.record(request.inference_id)
    assert record is not None and (record.status, record.max_tokens) == (inference_pb2.STATUS_STARTED, 1)
    assert status(host)["served"] == before["served"]


def test_the_same_signed_request_through_both_tas_at_once_is_answered_once(net: Net) -> None:
    """The same body and timestamp, signed for each TA, sent to both at the same moment: both clients get the same
    answer, the chain holds one inference, paid once, and one host's node ran it once."""
    requester, stamp = FUNDED["chat"], time.time_ns()
    text = body(net, "twice at once")
    copies = [Signed(requester, ta.address, text, stamp) for ta in net.tas]
    before = {e.address: status(e) for e in net.executors}
    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(lambda pair: pair[0].through(pair[1]), zip(copies, net.tas)))
    assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
    contents = [r.json()["choices"][0]["message"]["content"] for r in responses]
    assert contents[0] == contents[1]
    record = finished(net.querier, copies[0].inference_id.hex(), 60)
    assert record.status == inference_pb2.STATUS_FINISHED and record.payment == record.completion_tokens * PRICE
    after = {e.address: status(e) for e in net.executors}
    assert sum(after[a]["served"] - before[a]["served"] for a in after) == 1
    assert [i.id for i in inferences_of(net.querier, address_of(requester)) if i.id == record.id] == [record.id]


# --- a random mix --------------------------------------------------------------------------------------------


SEED = int.from_bytes(hashlib.sha256(b"paid answers mix").digest()[:4], "big")
REQUESTS = 240
CHANCE = {"stream": 0.65, "both": 0.2, "again": 0.25, "take_over": 0.12, "send": 0.3}
"""How often a step does each thing. The plain requests are only the load the others run in, so the steps are
few and the things rare on the network come often: with this seed every one of them, and every pair of them,
comes at least as often as among 500 steps at 0.3, 0.1, 0.1, 0.05 and 0.1 (``KINDS_AT_LEAST``), in 347
requests rather than 589."""
KINDS_AT_LEAST = {
    "stream": 164,
    "both": 46,
    "again": 43,
    "take_over": 20,
    "send": 63,
    "take_over+both": 3,
    "take_over+stream": 6,
    "take_over+again": 2,
    "both+stream": 18,
    "again+stream": 14,
    "send+take_over": 2,
    "send+both": 11,
    "send+again": 5,
}
"""How many steps of each kind (and pair of kinds) the plan holds at least: the counts of the 500-step plan."""


def mix_plan() -> list[dict[str, Any]]:
    """The seeded steps of the random mix, then which host each take-over names."""
    rng = random.Random(SEED)
    plan = [
        {
            "ta": rng.randrange(2),
            "stream": rng.random() < CHANCE["stream"],
            "both": rng.random() < CHANCE["both"],
            "again": rng.random() < CHANCE["again"],
            "take_over": rng.random() < CHANCE["take_over"],
            "send": rng.randrange(1, 1000) if rng.random() < CHANCE["send"] else 0,
            "tokens": rng.randrange(2, 12),
        }
        for _ in range(REQUESTS)
    ]
    for step in plan:
        step["again"] = step["again"] and not step["both"]  # through a TA it already went through: a replay (401)
        step["pick"] = rng.randrange(2)
    return plan


def test_the_mix_holds_every_kind_of_step_and_pair_of_kinds_often() -> None:
    """The mix below is seeded: its plan, counted before it runs, holds each kind of step and each pair of kinds at
    least ``KINDS_AT_LEAST`` times, so a change of the seed or the chances cannot leave one out unnoticed."""
    plan = mix_plan()
    counts = {kind: sum(all(step[k] for k in kind.split("+")) for step in plan) for kind in KINDS_AT_LEAST}
    assert all(counts[kind] >= least for kind, least in KINDS_AT_LEAST.items()), (counts, KINDS_AT_LEAST)
    assert {step["ta"] for step in plan} == {0, 1} and {step["pick"] for step in plan if step["take_over"]} == {0, 1}


def test_a_random_mix_of_requests_sends_take_overs_and_failovers_pays_every_answer_once(net: Net) -> None:
    """240 steps from one requester (seed printed on failure), 8 at a time: each through TA 0 or TA 1, some
    streamed, some sent through both TAs at once, some followed by the same request again through the other TA
    (a client failing over after its answer), some raced by a take-over its own TA starts naming the other host,
    and among them sends of its coins (how often each: ``CHANCE``). Every answer the client got is of an
    inference FINISHED once on chain, every copy of one answer the same text, and the requester's balance is its
    funds less exactly the payments and the sends."""
    requester = FUNDED["random"]
    funds = balance(net.querier, address_of(requester))
    plan = mix_plan()
    texts: dict[bytes, set[str]] = {}
    refused: list[Any] = []
    sent: list[int] = []
    lock = threading.Lock()

    def text_of(response: httpx.Response, stream: bool) -> str:
        if not stream or not response.headers.get("content-type", "").startswith("text/event-stream"):
            answer = response.json()
            return str(answer["choices"][0]["message"]["content"])
        pieces = []
        for line in response.text.splitlines():
            if line.startswith("data: {"):
                pieces += [c["delta"].get("content") or "" for c in json.loads(line[6:])["choices"]]
        return "".join(pieces)

    def one(i: int) -> None:
        step = plan[i]
        stamp = time.time_ns()
        text = body(net, f"mix {SEED} {i}", max_tokens=step["tokens"], stream=step["stream"])
        copies = [Signed(requester, ta.address, text, stamp) for ta in net.tas]
        first = copies[step["ta"]]
        if step["send"]:
            checked, raw = net.broadcast(
                requester, send_msg(address_of(requester), address_of(ROGUE), make_coins([("ngonka", step["send"])]))
            )
            if int(checked.get("code", 0)) == 0 and int(net.committed(raw).get("code", 0)) == 0:
                with lock:
                    sent.append(step["send"])
        ways = [first, copies[1 - step["ta"]]] if step["both"] else [first]
        with ThreadPoolExecutor(len(ways) + 1) as pool:
            calls = [pool.submit(copy.through, net.tas[copies.index(copy)]) for copy in ways]
            if step["take_over"]:  # its own TA races the start, naming a host of its choice
                rogue = Signed(requester, address_of(ROGUE), text, stamp)
                pool.submit(net.broadcast, ROGUE, rogue.start(net.executors[step["pick"]].address)).result()
            responses = [call.result() for call in calls]
        if step["again"]:
            responses.append(copies[1 - step["ta"]].through(net.tas[1 - step["ta"]]))
        with lock:
            for response in responses:
                if response.status_code == 200:
                    texts.setdefault(first.inference_id, set()).add(text_of(response, step["stream"]))
                else:
                    record = net.record(first.inference_id)
                    refused.append(
                        (
                            i,
                            step,
                            response.status_code,
                            response.text[:200],
                            record and (inference_pb2.Status.Name(record.status), record.ta, record.executor),
                        )
                    )

    with ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(one, i) for i in range(REQUESTS)]:
            future.result()
    assert not refused, (SEED, refused[:5])
    assert all(len(seen) == 1 for seen in texts.values()), (SEED, [t for t in texts.values() if len(t) > 1][:3])
    # each answer's inference FINISHED (read from node 0, which may be a block behind the host's node) …
    done = [finished(net.querier, the_id.hex(), 60) for the_id in texts]
    records = {i.id: i for i in inferences_of(net.querier, address_of(requester))}
    assert set(records) == set(texts), SEED  # … and nothing else started
    assert all(r.status == inference_pb2.STATUS_FINISHED and r.payment == r.completion_tokens * PRICE for r in done), (
        SEED
    )
    assert balance(net.querier, address_of(requester)) == funds - sum(r.payment for r in done) - sum(sent), SEED


# --- the accounting of the whole run (last) -------------------------------------------------------------------


def test_every_host_was_paid_for_every_answer_it_served_and_the_supply_is_whole(net: Net) -> None:
    """After everything above (chain_reads.check_accounting)."""
    check_accounting(net.querier, [(e.address, e.url) for e in net.executors], SETTINGS.total_supply_ngonka)
