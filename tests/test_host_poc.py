"""The host's PoC V2 duties (host/poc/) in process: a real ML node serving the tiny model (chat and ``/v1/verify``,
under uvicorn), the executing host's proxy in front of it keeping every answer's payload, and the validating host's
duty over a scripted chain that answers x/poc's, x/inference's queries and records the verdicts its transactions
carry. An honest answer is matched with a high score; a payload that is not what the chain's hashes commit to, or a
forged answer consistent with its own hashes, is a mismatch; an executor that does not serve the payload is judged
after its tries; the payload route refuses what it should with 400, 401, 403 and 404; an executor gone during its
dispute is judged on the copy its accuser kept, which the voters fetch from the accuser's host (a tampered copy
refused, a host not drawn refused by the accuser's route); a restarted validator sends its journalled verdicts again
without re-executing; nothing lands twice; a passed deadline sends nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from executor_fakes import Recorder, forward
from google.protobuf.message import Message
from servers import serve

from host import Executor, ExecutorConfig
from host.digest import KeptAnswer
from host.faults import AnswerFault, forged
from host.poc import PayloadConfig, Payloads, PayloadStore, PocConfig, PocFollower
from host.poc.config import Fault
from host.poc.fetch import PayloadFetcher
from host.poc.node import NodeFailed, Reexecution
from host.terms import TOP_LOGPROBS
from mlnode.local import LocalBackend
from mlnode.nodeinfo import Hardware
from mlnode.server import create_app
from mlnode.verify_chat import verify_router
from mlnode.weights import random_model
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from protogen.gonka.poc.v1 import poc_pb2, tx_pb2
from protogen.gonka.poc.v1 import query_pb2 as poc_query
from sdk.client.querier import Querier
from sdk.client.rpc import RPCError, RPCNotFound
from sdk.client.signer import Sent
from sdk.crypto import bech32, secp256k1
from x.inference.client import ChainError, parse_terms
from x.poc.client.payload import deadline, may_fetch

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LOADED = random_model("tiny", 1)
MODEL = LOADED.identity
UNREACHABLE = "http://127.0.0.1:9"
WINDOW = 20
"""Blocks from now to an inference's deadline."""


def key_of(name: str) -> secp256k1.PrivateKey:
    return secp256k1.PrivateKey(hashlib.sha256(f"host poc {name}".encode()).digest())


def address(key: secp256k1.PrivateKey) -> str:
    return bech32.encode(secp256k1.address_bytes(key.public_key))


USER, TA, HOST, JUDGE, STRANGER = (key_of(name) for name in ("user", "ta", "host", "judge", "stranger"))
TA_ADDRESS, HOST_ADDRESS, JUDGE_ADDRESS = address(TA), address(HOST), address(JUDGE)
VOTERS = (key_of("voter 1"), key_of("voter 2"))


@dataclass
class Chain:
    """A scripted chain: the inference and x/poc records, the hosts' node URLs, and the verdict transactions
    (``txs``: signer, messages) it took; a verdict is delivered as x/poc's msg server checks it (the drawn
    validator, SELECTED, by the deadline), and a second verdict fails the test."""

    height: int = 100
    inferences: dict[bytes, inference_pb2.Inference] = field(default_factory=dict)
    validations: dict[bytes, poc_pb2.Validation] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, int] = field(default_factory=dict)
    """x/inference's models by id, as their verification threshold (ppm); a model not here is not registered."""
    model_queries: int = 0
    txs: list[tuple[str, list[Message]]] = field(default_factory=list)
    lose: int = 0
    """Transactions still to take but never deliver (failed in their block, or dropped from the mempool)."""

    def query(self, path: str, request: Any, response_type: type[Any]) -> Any:
        method = path.rsplit("/", 1)[1]
        if method == "Assigned":
            awaiting = [
                v for v in self.validations.values()
                if (v.validator == request.validator and v.status == poc_pb2.STATUS_SELECTED)
                or (v.status == poc_pb2.STATUS_DISPUTED and any(
                    b.voter == request.validator and not b.verdict for b in v.votes))
            ]  # fmt: skip
            return poc_query.QueryAssignedResponse(validations=sorted(awaiting, key=deadline))
        if method == "Validation":
            record = self.validations.get(bytes.fromhex(request.inference_id))
            if record is None:
                raise RPCNotFound("no validation record")
            return poc_query.QueryValidationResponse(validation=record)
        if method == "Inference":
            inference = self.inferences.get(bytes.fromhex(request.id))
            if inference is None:
                raise RPCNotFound("unknown inference")
            return inference_query.QueryInferenceResponse(inference=inference)
        if method == "Model":
            self.model_queries += 1
            if request.id not in self.thresholds:
                raise RPCNotFound("model not found")
            return inference_query.QueryModelResponse(
                model=inference_pb2.Model(id=request.id, verify_threshold=self.thresholds[request.id])
            )
        if method == "Nodes":
            url = self.urls.get(request.operator, "")
            nodes = [inference_pb2.MlNode(operator=request.operator, node_id="n", url=url)] if url else []
            return inference_query.QueryNodesResponse(nodes=nodes)
        raise AssertionError(f"unexpected query {path}")

    def submitter(self, signer: str) -> Any:
        def submit(messages: Sequence[Message], gas: int) -> Sent:
            self.txs.append((signer, list(messages)))
            if self.lose:
                self.lose -= 1
                return Sent(f"TX{len(self.txs)}", b"")
            self.height += 1
            for message in messages:
                self.deliver(signer, message)
            return Sent(f"TX{len(self.txs)}", b"")

        return submit

    def deliver(self, signer: str, message: Message) -> None:
        assert isinstance(message, tx_pb2.MsgValidateInference) and message.validator == signer
        record = self.validations[message.inference_id]
        if record.status == poc_pb2.STATUS_DISPUTED:  # a drawn voter's vote
            [ballot] = [b for b in record.votes if b.voter == signer]
            assert not ballot.verdict and self.height <= record.vote_deadline_height, "a vote lands once, in time"
            ballot.verdict, ballot.score, ballot.height = message.verdict, message.score, self.height
            return
        assert record.status == poc_pb2.STATUS_SELECTED, "a verdict lands once"
        assert record.validator == signer and self.height <= record.deadline_height
        record.verdict, record.score, record.verdict_height = message.verdict, message.score, self.height
        record.status = (
            poc_pb2.STATUS_VALIDATED if message.verdict == poc_pb2.VERDICT_MATCH else poc_pb2.STATUS_DISPUTED
        )

    def verdicts(self) -> list[tuple[bytes, int, int]]:
        """(inference id, verdict, score) of every message sent, in order."""
        return [(m.inference_id, m.verdict, m.score) for _, ms in self.txs for m in ms]  # type: ignore[attr-defined]


@dataclass
class Confirming:
    """An admission that confirms the inferences the test started (``records``) and refuses any other."""

    records: dict[bytes, inference_pb2.Inference] = field(default_factory=dict)

    def admit(self, inference_id: bytes, start_tx: bytes) -> None:
        return None

    def confirm(self, inference_id: bytes) -> inference_pb2.Inference:
        if inference_id not in self.records:
            raise ChainError("unpaid", "not started")
        return self.records[inference_id]


@dataclass
class ExecutingHost:
    url: str
    payloads: Payloads
    recorder: Recorder
    admission: Confirming
    chain: Chain
    seed: int = 40

    def infer(self, **asked: Any) -> tuple[bytes, httpx.Response]:
        """One inference answered by this host and finished on the chain, drawn for the judge: its id and the
        answer the client got."""
        request = {"model": MODEL, "messages": [{"role": "user", "content": "Tell me a story."}], "max_tokens": 12}
        body = json.dumps({**request, **asked}).encode()
        self.seed += 1
        headers, content = forward(body, USER, TA_ADDRESS, self.seed)
        inference_id = bytes.fromhex(headers["x-inference-id"])
        terms = parse_terms(json.loads(content))
        assert terms.max_tokens is not None
        record = inference_pb2.Inference(
            id=inference_id,
            status=inference_pb2.STATUS_STARTED,
            executor=HOST_ADDRESS,
            model=MODEL,
            max_tokens=terms.max_tokens,
            seed=self.seed,
            params_hash=terms.params_hash(terms.max_tokens, self.seed),
            body_hash=hashlib.sha256(body).digest(),
        )
        self.admission.records[inference_id] = record
        finishes = len(self.recorder.finishes) + 1
        answer = httpx.post(self.url + "/v1/chat/completions", content=content, headers=headers, timeout=60)
        assert answer.status_code == 200, answer.text
        finish = self.recorder.settled(finishes)[-1]
        assert finish.inference_id == inference_id
        record.status = inference_pb2.STATUS_FINISHED
        record.response_hash, record.logprobs_digest = finish.response_hash, finish.logprobs_digest
        self.chain.inferences[inference_id] = record
        self.chain.validations[inference_id] = poc_pb2.Validation(
            inference_id=inference_id,
            executor=HOST_ADDRESS,
            model=MODEL,
            status=poc_pb2.STATUS_SELECTED,
            validator=JUDGE_ADDRESS,
            deadline_height=self.chain.height + WINDOW,
        )
        return inference_id, answer


@pytest.fixture(scope="module")
def mlnode() -> Iterator[str]:
    """The tiny model's ML node, chat and ``/v1/verify``: the executor's and the judge's."""
    backend = LocalBackend(LOADED, max_concurrency=2, max_queue=0, max_tokens_limit=64)
    app = create_app(backend, Hardware(device="cpu", threads=1, memory_bandwidth_gbps=1.0), [verify_router(LOADED)])
    with serve(app, lifespan="on") as url:
        yield url


@contextmanager
def executing(
    mlnode: str, chain: Chain, home: Path, host: str = HOST_ADDRESS, fault: AnswerFault | None = None
) -> Iterator[ExecutingHost]:
    """The proxy of the host ``host`` (by default the executing one), keeping payloads in ``home``, its URL
    registered on ``chain``; ``fault``: its test-only answer fault."""
    store = PayloadStore(home / "poc-payloads.sqlite", retention_s=3600, prune_interval_s=60)
    payloads = Payloads(store, chain, host, PayloadConfig())  # type: ignore[arg-type]
    recorder, admission = Recorder(), Confirming()
    config = ExecutorConfig(mlnode=mlnode, finisher=recorder, admission=admission, payloads=payloads, fault=fault)
    with serve(Executor(config), lifespan="on") as url:
        chain.urls[host] = url
        yield ExecutingHost(url, payloads, recorder, admission, chain)
    store.close()


def judge(
    chain: Chain,
    mlnode: str,
    home: Path,
    fault: Fault | None = None,
    attempts: int = 2,
    key: secp256k1.PrivateKey = JUDGE,
    payloads: Payloads | None = None,
) -> PocFollower:
    """The validation duty of the host ``key`` (by default the judge), keeping what it checks in ``payloads``."""
    config = PocConfig(home=home, fetch_attempts=attempts, retry_s=0, fetch_timeout_s=5, fault=fault)
    querier: Any = chain
    submit = chain.submitter(address(key))
    return PocFollower.of(querier, submit, lambda: chain.height, key, mlnode, config, payloads)


def forge(host: ExecutingHost, inference_id: bytes) -> None:
    """Make ``inference_id``'s kept answer a forgery consistent with its own hashes: its logprobs moved, as if the
    host had finished with those (only a re-execution tells)."""
    body, answer = host.payloads.store.get(inference_id) or pytest.fail("not kept")
    moved = [{**t, "logprob": t["logprob"] - 0.5} for t in answer.choices[0].logprobs or []]
    lying = KeptAnswer(choices=[answer.choices[0].model_copy(update={"logprobs": moved})], usage=answer.usage)
    host.payloads.store.put(inference_id, body, lying)
    host.chain.inferences[inference_id].logprobs_digest = lying.logprobs_digest()


def draw_voters(chain: Chain, inference_id: bytes, *voters: str) -> poc_pb2.Validation:
    """The chain's draw of ``voters`` for the dispute on ``inference_id`` (the accuser's own deadline passed)."""
    record = chain.validations[inference_id]
    assert record.status == poc_pb2.STATUS_DISPUTED
    record.deadline_height, record.vote_deadline_height = chain.height - 1, chain.height + WINDOW
    for voter in voters:
        record.votes.add(voter=voter, power=10)
    return record


def ask(url: str, body: Any, status: int, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    """``POST /v1/poc/payload`` at ``url`` with ``body`` (bytes, or a JSON document): its answer must be
    ``status``, an error body with ``code`` and ``param`` unless 200."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = httpx.post(url + "/v1/poc/payload", content=content, timeout=10)
    assert response.status_code == status, response.text
    document: dict[str, Any] = response.json()
    if status != 200:
        error = document["error"]
        assert error["message"] and (error["code"], error["param"]) == (code, param), error
    return document


def run(follower: PocFollower, steps: int = 10) -> None:
    """Step until the duty has nothing more to do at once (every step must succeed)."""
    for _ in range(steps):
        busy = follower.duty.step()
        if not busy:
            return
    raise AssertionError("the duty is still busy")


def test_honest_answers_are_matched_and_the_client_gets_what_it_asked(mlnode: str, tmp_path: Path) -> None:
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        whole, answered = host.infer(temperature=0.7)
        assert answered.json()["choices"][0]["logprobs"] is None  # asked of the node, kept from the client
        streamed, events = host.infer(stream=True, logprobs=True, top_logprobs=2)
        chunks = [json.loads(line[6:]) for line in events.text.splitlines() if line.startswith("data: {")]
        tops = [len(t["top_logprobs"]) for c in chunks if c["choices"] and c["choices"][0]["logprobs"] for t in
                c["choices"][0]["logprobs"]["content"]]  # fmt: skip
        assert tops and set(tops) == {2}
        kept = host.payloads.store.get(whole)
        assert kept is not None and kept[1].choices[0].logprobs is not None
        assert {len(t["top_logprobs"]) for t in kept[1].choices[0].logprobs} == {TOP_LOGPROBS}

        duty = judge(chain, mlnode, tmp_path / "judge")
        run(duty)
        for inference_id in (whole, streamed):
            record = chain.validations[inference_id]
            assert record.verdict == poc_pb2.VERDICT_MATCH and record.score >= 990_000, record
        status = duty.status()
        assert (status["matched"], status["verdicts_sent"], status["late"], status["errors"]) == (2, 2, 0, 0)
        served = httpx.get(host.url + "/v1/executor/status", timeout=10).json()["poc"]
        assert (served["payloads_kept"], served["payloads_served"], served["payloads_refused"]) == (2, 2, 0)
        duty.stop()


def test_a_payload_that_is_not_what_the_chain_committed_to_is_a_mismatch(mlnode: str, tmp_path: Path) -> None:
    """A body or an answer that is not what the chain's hashes commit to, scored 0 unseen by the node; and an
    answer forged consistently with its own hashes (its logprobs moved), caught by the re-execution."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        other_body, other_answer, forged = (host.infer()[0] for _ in range(3))
        store = host.payloads.store
        body, answer = store.get(other_body) or pytest.fail("not kept")
        store.put(other_body, body.replace(b"story", b"poem"), answer)
        body, answer = store.get(other_answer) or pytest.fail("not kept")
        altered = answer.model_copy(update={"choices": [answer.choices[0].model_copy(update={"content": "hello"})]})
        store.put(other_answer, body, altered)
        forge(host, forged)

        duty = judge(chain, mlnode, tmp_path / "judge")
        run(duty)
        verdicts = {record.inference_id: (record.verdict, record.score) for record in chain.validations.values()}
        assert verdicts[other_body] == verdicts[other_answer] == (poc_pb2.VERDICT_MISMATCH, 0)
        verdict, score = verdicts[forged]
        assert verdict == poc_pb2.VERDICT_MISMATCH and score < 500_000
        reasons = [entry["reason"] for entry in duty.status()["last"]]
        assert reasons[:2] == ["payload: body_hash", "payload: response_hash"] and "low_score" in reasons[2]
        assert (duty.status()["tampered"], duty.status()["mismatched"]) == (2, 1)
        duty.stop()


def test_a_host_that_forges_logprobs_is_caught_on_exactly_the_answers_it_forged(mlnode: str, tmp_path: Path) -> None:
    """The test-only ``forge`` fault: the client, the finish and the kept payload all carry the made-up list
    (consistent with the chain's hashes), so only the re-execution finds those answers wrong; the others match."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host", fault="forge") as host:
        answers: list[tuple[bytes, httpx.Response]] = []
        while len(answers) < 24 and not 2 <= sum(forged("forge", i) for i, _ in answers) <= len(answers) - 2:
            answers.append(host.infer(logprobs=True, stream=len(answers) % 2 == 1))  # ids vary with the time
        lying = {inference_id for inference_id, _ in answers if forged("forge", inference_id)}
        assert 2 <= len(lying) <= len(answers) - 2, "both kinds, whole and streamed"
        for inference_id, answer in answers:
            body, kept = host.payloads.store.get(inference_id) or pytest.fail("not kept")
            assert kept.logprobs_digest() == chain.inferences[inference_id].logprobs_digest
            if not answer.headers["content-type"].startswith("text/event-stream"):
                shown = answer.json()["choices"][0]["logprobs"]["content"]
                assert [t["logprob"] for t in shown] == [t["logprob"] for t in kept.choices[0].logprobs or []]
        duty = judge(chain, mlnode, tmp_path / "judge")
        run(duty, steps=len(answers) + 1)  # one answer judged a step: up to 24 of them, however many it took
        verdicts = {i: chain.validations[i].verdict for i, _ in answers}
        assert {i for i, v in verdicts.items() if v == poc_pb2.VERDICT_MISMATCH} == lying, verdicts
        assert all(v == poc_pb2.VERDICT_MATCH for i, v in verdicts.items() if i not in lying)
        duty.stop()


def test_an_executor_that_serves_no_payload_fails_after_its_tries(mlnode: str, tmp_path: Path) -> None:
    """Unreachable: tried again at the next step, then judged MISMATCH with score 0; one whose deadline is within
    the margin is judged at its first failed try, so its verdict still lands."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        gone, near = host.infer()[0], host.infer()[0]
    chain.urls[HOST_ADDRESS] = UNREACHABLE
    chain.validations[near].deadline_height = chain.height + 2
    duty = judge(chain, mlnode, tmp_path / "judge", attempts=2)
    assert duty.duty.step()  # the near one: judged at once
    assert chain.verdicts() == [(near, poc_pb2.VERDICT_MISMATCH, 0)]
    assert not duty.duty.step()  # the other: a first failed try
    assert len(chain.txs) == 1
    assert not duty.duty.step()  # its second: judged
    assert chain.verdicts()[1:] == [(gone, poc_pb2.VERDICT_MISMATCH, 0)]
    assert duty.status()["unserved"] == 2
    duty.stop()


def test_the_payload_route_refuses_whom_it_should(mlnode: str, tmp_path: Path) -> None:
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        inference_id = host.infer()[0]
        unkept = b"\x05" * 32
        chain.validations[unkept] = poc_pb2.Validation(
            inference_id=unkept, executor=HOST_ADDRESS, validator=JUDGE_ADDRESS
        )
        judge_asks, stranger_asks = PayloadFetcher(JUDGE, 5), PayloadFetcher(STRANGER, 5)
        good = judge_asks.request(inference_id, HOST_ADDRESS)
        ask(host.url, b"{not json", 400)
        ask(host.url, {**good, "inference_id": "zz"}, 400, None, "inference_id")
        ask(host.url, {**good, "signature": "c2hvcnQ="}, 400, None, "signature")
        ask(host.url, {**good, "validator": "gonka1notanaddress"}, 400, None, "validator")
        ask(host.url, {**good, "extra": 1}, 400, None, "extra")
        ask(host.url, {**good, "pubkey": STRANGER.public_key.hex()}, 401, "address_mismatch")
        signed_for_another = judge_asks.request(inference_id, JUDGE_ADDRESS)
        ask(host.url, signed_for_another, 401, "invalid_signature")
        ask(host.url, {**good, "timestamp_ns": good["timestamp_ns"] + 1}, 401, "invalid_signature")
        stale = PayloadFetcher(JUDGE, 5, clock=lambda: time.time() - 120).request(inference_id, HOST_ADDRESS)
        ask(host.url, stale, 401, "stale_request")
        ask(host.url, stranger_asks.request(inference_id, HOST_ADDRESS), 403, "not_assigned")
        ask(host.url, judge_asks.request(b"\x09" * 32, HOST_ADDRESS), 404, "unknown_inference")
        ask(host.url, judge_asks.request(unkept, HOST_ADDRESS), 404, "no_payload")
        served = ask(host.url, good, 200)
        assert served["inference_id"] == inference_id.hex()
        assert hashlib.sha256(base64.b64decode(served["body"])).digest() == (chain.inferences[inference_id].body_hash)
        chain.validations[inference_id].votes.add(voter=address(STRANGER))  # drawn to vote on its dispute
        assert ask(host.url, stranger_asks.request(inference_id, HOST_ADDRESS), 200)["body"] == served["body"]
        status = httpx.get(host.url + "/v1/executor/status", timeout=10).json()["poc"]
        assert (status["payloads_served"], status["payloads_refused"]) == (2, 12)
        judge_asks.close()
        stranger_asks.close()


def test_a_drawn_voter_re_executes_a_disputed_answer_and_votes_by_the_vote_deadline(
    mlnode: str, tmp_path: Path
) -> None:
    """Another host accused the answer; the judge, drawn to vote on the dispute, fetches the payload as a voter,
    re-executes it and votes by the dispute's deadline (the accuser's own deadline has passed)."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        inference_id = host.infer()[0]
        record = chain.validations[inference_id]
        record.validator, record.status = address(STRANGER), poc_pb2.STATUS_DISPUTED
        record.verdict = poc_pb2.VERDICT_MISMATCH
        draw_voters(chain, inference_id, JUDGE_ADDRESS)
        duty = judge(chain, mlnode, tmp_path / "judge")
        run(duty)
        [ballot] = record.votes
        assert ballot.verdict == poc_pb2.VERDICT_MATCH and ballot.score >= 990_000, ballot
        assert duty.status()["late"] == 0
        run(duty)  # voted: nothing more to send
        assert len(chain.txs) == 1
        duty.stop()


def accuse(chain: Chain, mlnode: str, home: Path, accuser: ExecutingHost) -> None:
    """The judge, drawn for every inference on ``chain``, checks each payload and keeps it in its own host's store
    (``accuser``'s), but its node (as if broken) finds every answer mismatched: each verdict opens a dispute."""
    duty = judge(chain, mlnode, home, payloads=accuser.payloads)
    duty.duty.node.verify = lambda body: Reexecution(False, 0.0, ("low_score",))  # type: ignore[method-assign]
    run(duty)
    duty.stop()
    assert {record.status for record in chain.validations.values()} == {poc_pb2.STATUS_DISPUTED}


def test_an_executor_gone_during_its_dispute_is_judged_on_what_the_voters_re_execute(
    mlnode: str, tmp_path: Path
) -> None:
    """The judge accuses an honest answer and a forged one (its logprobs moved, consistent with its hashes), keeping
    both payloads; the executor's host goes away; each voter, refused a connection by the executor, fetches the
    payload from the accuser's host, checks it against the chain's hashes and votes on what its node re-executed:
    the honest answer matched, the forged one not."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "accuser", JUDGE_ADDRESS) as accuser:
        with executing(mlnode, chain, tmp_path / "host") as host:
            honest, forged = host.infer()[0], host.infer()[0]
            forge(host, forged)
            accuse(chain, mlnode, tmp_path / "judge", accuser)
        assert httpx.get(accuser.url + "/v1/executor/status", timeout=10).json()["poc"]["payloads_kept"] == 2
        for inference_id in (honest, forged):
            draw_voters(chain, inference_id, *(address(voter) for voter in VOTERS))
        for voter in VOTERS:
            duty = judge(chain, mlnode, tmp_path / address(voter), key=voter)
            run(duty)
            status = duty.status()
            counted = (status["accuser_served"], status["unserved"], status["matched"], status["mismatched"])
            assert counted == (2, 0, 1, 1)
            assert all(entry["reason"].endswith("(the accuser's copy)") for entry in status["last"])
            duty.stop()
        for inference_id, verdict in ((honest, poc_pb2.VERDICT_MATCH), (forged, poc_pb2.VERDICT_MISMATCH)):
            for ballot in chain.validations[inference_id].votes:
                assert ballot.verdict == verdict and (ballot.score >= 990_000) == (verdict == poc_pb2.VERDICT_MATCH)
        served = httpx.get(accuser.url + "/v1/executor/status", timeout=10).json()["poc"]
        assert (served["payloads_served"], served["payloads_refused"]) == (4, 0)


def test_a_tampered_copy_from_the_accuser_is_refused_and_its_route_serves_only_the_voters(
    mlnode: str, tmp_path: Path
) -> None:
    """The accuser's route refuses, with 403 ``not_assigned``, a host no dispute drew (a stranger, a voter before
    the draw, the accuser itself); and a copy the accuser altered does not match the chain's hashes, so the voter
    refuses it: with the executor gone, the payload is served by no one, judged as today (MISMATCH, score 0, after
    its tries)."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "accuser", JUDGE_ADDRESS) as accuser:
        with executing(mlnode, chain, tmp_path / "host") as host:
            inference_id = host.infer()[0]
            accuse(chain, mlnode, tmp_path / "judge", accuser)
        voter, stranger, itself = (PayloadFetcher(key, 5) for key in (VOTERS[0], STRANGER, JUDGE))
        for asker in (voter, stranger, itself):
            ask(accuser.url, asker.request(inference_id, JUDGE_ADDRESS), 403, "not_assigned")
        draw_voters(chain, inference_id, address(VOTERS[0]))
        for asker in (stranger, itself):
            ask(accuser.url, asker.request(inference_id, JUDGE_ADDRESS), 403, "not_assigned")
            asker.close()
        ask(accuser.url, voter.request(inference_id, JUDGE_ADDRESS), 200)  # drawn now: served
        voter.close()
        body, answer = accuser.payloads.store.get(inference_id) or pytest.fail("not kept")
        accuser.payloads.store.put(inference_id, body.replace(b"story", b"poem"), answer)

        duty = judge(chain, mlnode, tmp_path / "voter", key=VOTERS[0], attempts=2)
        assert not duty.duty.step()  # a first try: the executor gone, the accuser's copy refused
        assert not duty.duty.step()  # its second: judged
        [ballot] = chain.validations[inference_id].votes
        assert (ballot.verdict, ballot.score) == (poc_pb2.VERDICT_MISMATCH, 0)
        status = duty.status()
        counted = (status["accuser_tampered"], status["accuser_served"], status["unserved"], status["tampered"])
        assert counted == (2, 0, 1, 0)
        assert status["last"][-1]["reason"] == "payload not served (2 tries)"
        duty.stop()


def test_only_the_executor_and_the_accuser_serve_a_payload_and_the_accuser_only_to_voters() -> None:
    """``may_fetch``: the executor serves its drawn validator and the dispute's voters, the accuser the voters alone,
    any other host no one; an empty address is no one."""
    record = poc_pb2.Validation(executor=HOST_ADDRESS, validator=JUDGE_ADDRESS)
    record.votes.add(voter=address(VOTERS[0]))
    voter, stranger = address(VOTERS[0]), address(STRANGER)
    allowed = {
        (asker, host)
        for asker in (voter, stranger, JUDGE_ADDRESS, HOST_ADDRESS, "")
        for host in (HOST_ADDRESS, JUDGE_ADDRESS, stranger, "")
        if may_fetch(record, asker, host)
    }
    assert allowed == {(voter, HOST_ADDRESS), (JUDGE_ADDRESS, HOST_ADDRESS), (voter, JUDGE_ADDRESS)}


def test_the_validator_judges_with_the_models_threshold_on_chain(mlnode: str, tmp_path: Path) -> None:
    """The model's threshold on chain (x/inference's Model query, read once per model until ``threshold_ttl_s``
    passes) goes to the judge's ML node as ``/v1/verify``'s ``threshold``, so each verdict is a MATCH exactly when
    its score reaches the chain's threshold (what x/poc accepts); a model the chain does not know is judged with
    the default, as x/poc judges it."""
    chain = Chain(thresholds={MODEL: 999_999})
    with executing(mlnode, chain, tmp_path / "host") as host:
        first, second = host.infer()[0], host.infer()[0]
        duty = judge(chain, mlnode, tmp_path / "judge")
        now = [1000.0]
        duty.duty.clock = lambda: now[0]
        asked: list[dict[str, Any]] = []
        verify = duty.duty.node.verify

        def verifying(body: dict[str, Any]) -> Reexecution:
            asked.append(body)
            return verify(body)

        duty.duty.node.verify = verifying  # type: ignore[method-assign]
        run(duty)
        assert [body["threshold"] for body in asked] == [0.999999] * 2 and chain.model_queries == 1
        assert {inference_id for inference_id, _, _ in chain.verdicts()} == {first, second}
        for inference_id, verdict, score in chain.verdicts():
            assert (verdict == poc_pb2.VERDICT_MATCH) == (score >= 999_999), (inference_id.hex(), verdict, score)

        third = host.infer()[0]
        del chain.thresholds[MODEL]  # no longer registered (or the query fails as not found): the default
        now[0] += PocConfig(home=tmp_path).threshold_ttl_s
        run(duty)
        assert asked[-1]["threshold"] == 0.8 and chain.model_queries == 2
        assert chain.verdicts()[-1][:2] == (third, poc_pb2.VERDICT_MATCH)
        duty.stop()


def test_a_restarted_validator_resends_its_journal_without_re_executing(mlnode: str, tmp_path: Path) -> None:
    """A verdict sent in a transaction that never lands is journalled: the restarted duty sends it again
    ``resend_blocks`` after (not before), without asking its node again, even while its node cannot judge what was
    left; then judges that; once on chain, nothing is sent again."""
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        first, second = host.infer()[0], host.infer()[0]
        chain.lose = 1
        before = judge(chain, mlnode, tmp_path / "judge")
        assert before.duty.step()  # the first judged and sent; its transaction is lost; then the process dies
        assert chain.verdicts() == [(first, poc_pb2.VERDICT_MATCH, chain.verdicts()[0][2])]
        assert chain.validations[first].status == poc_pb2.STATUS_SELECTED
        sent_at = chain.height
        before.stop()

        after = judge(chain, mlnode, tmp_path / "judge")
        asked: list[dict[str, Any]] = []
        down = [True]
        verify = after.duty.node.verify

        def verifying(body: dict[str, Any]) -> Reexecution:
            if down:
                raise NodeFailed("the ML node is down")
            asked.append(body)
            return verify(body)

        after.duty.node.verify = verifying  # type: ignore[method-assign]
        assert not after.duty.step()  # the second cannot be judged, the first may still land: nothing sent
        assert len(chain.txs) == 1 and after.status()["errors"] == 1
        chain.height = sent_at + PocConfig(home=tmp_path).resend_blocks
        assert not after.duty.step()  # the first sent again, unjudged, though the second is still stuck
        assert chain.verdicts() == [chain.verdicts()[0]] * 2 and asked == []
        down.clear()
        run(after)
        assert [m[0] for m in chain.verdicts()] == [first, first, second] and len(asked) == 1
        assert {chain.validations[i].status for i in (first, second)} == {poc_pb2.STATUS_VALIDATED}
        chain.height += 10
        run(after)
        assert len(chain.txs) == 3  # on chain: never sent again
        after.stop()


def test_a_passed_deadline_sends_nothing_and_an_accuser_judges_unseen(mlnode: str, tmp_path: Path) -> None:
    chain = Chain()
    with executing(mlnode, chain, tmp_path / "host") as host:
        late, honest = host.infer()[0], host.infer()[0]
        chain.validations[late].deadline_height = chain.height  # the next block would be past it
        accuser = judge(chain, mlnode, tmp_path / "accuser", fault="accuse")
        run(accuser)
        assert chain.verdicts() == [(honest, poc_pb2.VERDICT_MISMATCH, 0)]  # TEST ONLY: an honest answer accused
        assert accuser.status()["late"] == 1 and chain.validations[late].status == poc_pb2.STATUS_SELECTED
        assert httpx.get(host.url + "/v1/executor/status", timeout=10).json()["poc"]["payloads_served"] == 0
        accuser.stop()


def test_payloads_are_pruned_after_their_retention(tmp_path: Path) -> None:
    now = [1000.0]
    store = PayloadStore(tmp_path / "p.sqlite", retention_s=50, prune_interval_s=10, clock=lambda: now[0])
    answer = KeptAnswer(choices=[], usage=None)
    store.put(b"\x01" * 32, b"old", answer)
    now[0] += 40
    store.put(b"\x02" * 32, b"newer", answer)
    now[0] += 20  # the first is 60 s old, the second 20 s
    store.put(b"\x03" * 32, b"newest", answer)
    assert store.get(b"\x01" * 32) is None and store.get(b"\x02" * 32) == (b"newer", answer)
    store.close()
    reopened = PayloadStore(tmp_path / "p.sqlite", retention_s=50, prune_interval_s=10)
    assert reopened.get(b"\x03" * 32) == (b"newest", answer)  # on disk
    reopened.close()


def test_a_missing_record_is_told_apart_from_a_failed_query() -> None:
    """The payload route answers 404 for what the chain says does not exist, 503 when its node fails."""
    querier = Querier("tcp://127.0.0.1:9")
    for code, codespace, raised in ((38, "sdk", RPCNotFound), (18, "sdk", RPCError), (38, "bank", RPCError)):
        querier.rpc.abci_query = lambda *a, c=code, s=codespace, **k: {"code": c, "codespace": s, "log": "x"}  # type: ignore[method-assign]
        with pytest.raises(RPCError) as failed:
            querier.raw("/gonka.poc.v1.Query/Validation", b"")
        assert type(failed.value) is raised
