"""The executor proxy (host/) in process, on loopback: a fake ML node (tests/agent_fakes.py) behind the
proxy, the TA (agent/server.py, over a scripted chain) in front of it, the official ``openai`` client signing every
request; the finishes the proxy derives are recorded; a TA that leaves before the answer gets nothing finished.
Then the header check on its own, the seed splice, the response hash / token / logprob derivation, the
``Finisher``'s state machine over a scripted chain, and its journal across restarts."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from agent_fakes import FakeNode, ScriptedChain, respond
from executor_fakes import Recorder, forward
from servers import serve

from agent.chain import Model, Node
from agent.config import AgentConfig
from agent.server import Agent
from host import Digest, Executor, ExecutorConfig, Finisher, FinishJournal, finish_of_answer
from host.terms import TOP_LOGPROBS
from mlnode.schemas import ChatCompletionRequest
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.client.rpc import RPCError
from sdk.client.signer import Sent
from sdk.client.signing import SignedRequests, canonical_json, request_headers
from sdk.crypto import bech32, secp256k1
from sdk.http.errors import ApiError
from sdk.http.signed import check_forwarded, signed_headers, verify_signed, with_seed, without_seed
from x.inference.client import ChainError, Finish, parse_terms

USER = secp256k1.PrivateKey(hashlib.sha256(b"executor user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
TA_KEY = secp256k1.PrivateKey(hashlib.sha256(b"executor ta").digest())
TA_ADDRESS = bech32.encode(secp256k1.address_bytes(TA_KEY.public_key))
HOST_KEY = secp256k1.PrivateKey(hashlib.sha256(b"executor host").digest())
HOST = bech32.encode(secp256k1.address_bytes(HOST_KEY.public_key))
MODEL = Model("m1", context_length=512, price_per_token=2)
CHAT: dict[str, Any] = {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}
TEXT_HASH = hashlib.sha256(b"fake says hi").digest()
EMPTY = hashlib.sha256(b"").digest()


@dataclass
class Gate:
    """An admission over a scripted chain: it records what it is asked, refuses while ``refuse`` is set, and
    confirms an inference on the terms the scripted chain's start recorded (or ``escrow`` registered)."""

    asked: list[tuple[bytes, bytes]] = field(default_factory=list)
    refuse: Exception | None = None
    chain: ScriptedChain | None = None
    records: dict[bytes, inference_pb2.Inference] = field(default_factory=dict)
    confirmed: list[bytes] = field(default_factory=list)

    def admit(self, inference_id: bytes, start_tx: bytes) -> None:
        self.asked.append((inference_id, start_tx))
        if self.refuse is not None:
            raise self.refuse

    def escrow(self, content: bytes, inference_id: bytes, max_tokens: int = 256) -> None:
        """A start of ``inference_id`` on the terms of the forwarded body ``content`` (what an honest TA sends)."""
        terms = parse_terms(json.loads(content))
        tokens = terms.max_tokens or max_tokens
        self.records[inference_id] = inference_pb2.Inference(
            id=inference_id,
            status=inference_pb2.STATUS_STARTED,
            executor=HOST,
            model=terms.model,
            max_tokens=tokens,
            seed=terms.seed or 0,
            params_hash=terms.params_hash(tokens, terms.seed or 0),
        )

    def confirm(self, inference_id: bytes) -> inference_pb2.Inference:
        self.confirmed.append(inference_id)
        for start in reversed(self.chain.starts if self.chain is not None else []):
            if start.inference_id == inference_id:
                return inference_pb2.Inference(
                    id=inference_id,
                    status=inference_pb2.STATUS_STARTED,
                    executor=start.executor,
                    model=start.model,
                    max_tokens=start.max_tokens,
                    seed=start.seed,
                    params_hash=start.params_hash,
                )
        if inference_id in self.records:
            return self.records[inference_id]
        raise ChainError("unpaid", "the chain has not started it")


@contextmanager
def stack(fake: FakeNode, gate: Gate | None = None) -> Iterator[tuple[str, str, Recorder]]:
    """The fake node, the executor proxy in front of it, and a TA routing to the proxy: (TA URL, proxy URL)."""
    recorder = Recorder()
    gate = gate or Gate()
    with ExitStack() as stack:
        node_url = stack.enter_context(serve(fake))
        proxy = stack.enter_context(
            serve(Executor(ExecutorConfig(mlnode=node_url, finisher=recorder, admission=gate)), lifespan="on")
        )
        chain = ScriptedChain([MODEL], [Node(HOST, "n0", proxy, ("m1",), 1 << 30, 8, 10)], {USER_ADDRESS: 10**9})
        gate.chain = chain
        ta = stack.enter_context(serve(Agent(AgentConfig(key=TA_KEY, chain=chain)), lifespan="on"))
        yield ta, proxy, recorder


def client(ta: str) -> openai.OpenAI:
    http = httpx.Client(auth=SignedRequests(USER, TA_ADDRESS), timeout=30)
    return openai.OpenAI(base_url=f"{ta}/v1", api_key="unused", http_client=http, max_retries=0)


def test_answers_through_the_proxy_are_relayed_and_finished() -> None:
    fake = FakeNode("fake")
    with stack(fake) as (ta, proxy, recorder):
        chat = client(ta)
        raw = chat.chat.completions.with_raw_response.create(**CHAT)
        assert raw.parse().choices[0].message.content == "fake says hi"
        whole = recorder.settled(1)[-1]
        assert whole.inference_id.hex() == raw.headers["x-inference-id"]
        # Logprobs are asked of the node for PoC V2 (the digest covers them), and kept from the client.
        assert (whole.response_hash, whole.prompt_tokens, whole.completion_tokens, whole.logprobs_digest) == (
            TEXT_HASH,
            5,
            3,
            fake.logprobs_digest(TOP_LOGPROBS),
        )
        assert raw.parse().choices[0].logprobs is None
        assert (fake.served[-1]["logprobs"], fake.served[-1]["top_logprobs"]) == (True, TOP_LOGPROBS)
        assert fake.served[-1]["seed"] is not None  # the TA's seed reached the node through the proxy

        # A stream that did not ask for usage: the node is asked, the client does not see it; it asked for
        # logprobs without alternatives: it gets none of the alternatives the node was asked for.
        chunks = list(chat.chat.completions.create(**CHAT, stream=True, logprobs=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "fake says hi"
        assert all(c.choices and c.usage is None for c in chunks)
        tokens = [t for c in chunks if c.choices[0].logprobs for t in c.choices[0].logprobs.content or []]
        assert [t.token for t in tokens] == ["fake ", "says ", "hi"] and all(t.top_logprobs == [] for t in tokens)
        assert fake.served[-1]["stream_options"] == {"include_usage": True}
        streamed = recorder.settled(2)[-1]
        assert (streamed.response_hash, streamed.prompt_tokens, streamed.completion_tokens) == (TEXT_HASH, 5, 3)
        assert streamed.logprobs_digest == fake.logprobs_digest(TOP_LOGPROBS)

        # One that asked for usage gets it, unchanged.
        chunks = list(chat.chat.completions.create(**CHAT, stream=True, stream_options={"include_usage": True}))
        assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3
        assert (recorder.settled(3)[-1].prompt_tokens, recorder.finishes[-1].completion_tokens) == (5, 3)

        # The same answer whole, with two alternatives: the same digest as the stream's, two alternatives shown.
        shown = chat.chat.completions.create(**CHAT, logprobs=True, top_logprobs=2).choices[0].logprobs
        assert shown is not None and [len(t.top_logprobs) for t in shown.content or []] == [2, 2, 2]
        assert recorder.settled(4)[-1].logprobs_digest == fake.logprobs_digest(TOP_LOGPROBS)
        assert len(recorder.finishes) == 4 and len({f.inference_id for f in recorder.finishes}) == 4

        for path in ("/health", "/v1/models", "/v1/node/info"):
            assert httpx.get(proxy + path, timeout=10).status_code == 200
        assert httpx.get(proxy + "/v1/node/info", timeout=10).json()["load"]["max_concurrency"] == 8
        assert httpx.get(proxy + "/v1/executor/status", timeout=10).json() == {
            "pending": 4,
            "served": 4,
            "refused": 0,
            "unpaid": 0,
            "abandoned": 0,
            "replayed": 0,
            "unfinished": 0,
        }


class HangingNode:
    """An ML node that never answers: it reads the request, then waits for its caller to close the connection."""

    def __init__(self) -> None:
        self.received = threading.Event()
        self.closed = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        self.received.set()
        if (await receive())["type"] == "http.disconnect":
            self.closed.set()


@pytest.mark.parametrize("stream", [False, True])
def test_a_ta_that_leaves_before_the_answer_gets_nothing_finished(stream: bool) -> None:
    """The TA dies (here: gives up) while the node works: the proxy closes the node's request, which frees its
    slot, and finishes nothing, so a retry through another TA can take the inference over on chain."""
    node, recorder, gate = HangingNode(), Recorder(), Gate()
    with (
        serve(node) as node_url,
        serve(Executor(ExecutorConfig(mlnode=node_url, finisher=recorder, admission=gate)), lifespan="on") as proxy,
    ):
        headers, content = forwarded(json.dumps({**CHAT, "stream": stream}).encode(), seed=7)
        gate.escrow(content, bytes.fromhex(headers["x-inference-id"]))
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                proxy + "/v1/chat/completions", content=content, headers=headers, timeout=httpx.Timeout(10, read=0.5)
            )
        assert node.received.wait(5)
        assert node.closed.wait(5), "the proxy kept the node's request open after the TA left"
        status = httpx.get(proxy + "/v1/executor/status", timeout=10).json()
        assert (status["abandoned"], status["served"], recorder.finishes) == (1, 0, [])


def forwarded(body: bytes, seed: int | None = None) -> tuple[dict[str, str], bytes]:
    """The headers and body the TA forwards for ``body`` signed by the user (seed spliced in if given)."""
    return forward(body, USER, TA_ADDRESS, seed)


def test_the_proxy_refuses_what_no_requester_signed_and_forwards_nothing() -> None:
    fake, gate = FakeNode("fake"), Gate()
    with stack(fake, gate) as (_, proxy, recorder):
        body = json.dumps(CHAT).encode()
        url = proxy + "/v1/chat/completions"

        def refused(headers: dict[str, str], content: bytes, code: str) -> None:
            response = httpx.post(url, content=content, headers=headers, timeout=10)
            assert response.status_code == 401, response.text
            error = response.json()["error"]
            assert (error["type"], error["code"]) == ("authentication_error", code) and error["message"]

        refused({}, body, "missing_signature")
        headers, content = forwarded(body)
        refused({k: v for k, v in headers.items() if k != "x-inference-id"}, content, "missing_signature")
        refused(headers, body.replace(b"hi", b"ho"), "invalid_signature")  # another body
        refused({**headers, "x-inference-id": "00" * 32}, content, "inference_id_mismatch")
        refused({**headers, "x-ta-address": HOST}, content, "invalid_signature")  # signed for another TA
        other = secp256k1.PrivateKey(hashlib.sha256(b"someone else").digest())
        refused({**headers, "x-requester-pubkey": other.public_key.hex()}, content, "address_mismatch")
        seeded_headers, seeded = forwarded(body, seed=77)
        refused({**seeded_headers, "x-seed": "78"}, seeded, "invalid_signature")
        refused({k: v for k, v in seeded_headers.items() if k != "x-seed"}, seeded, "invalid_signature")
        assert fake.served == [] and recorder.finishes == []
        assert httpx.get(proxy + "/v1/executor/status", timeout=10).json()["refused"] == 8

        # Signed right, admitted and started on chain on its terms, it is served.
        gate.escrow(seeded, bytes.fromhex(seeded_headers["x-inference-id"]))
        response = httpx.post(url, content=seeded, headers=seeded_headers, timeout=10)
        assert response.status_code == 200 and fake.served[-1]["seed"] == 77
        assert len(recorder.settled(1)) == 1


def test_the_proxy_serves_only_what_its_admission_takes() -> None:
    """The TA forwards the start transaction the chain took (X-Start-Tx) and the proxy asks its admission with it
    before the node works; a refusal is 402 ``unpaid`` and the node sees nothing; a chain node that does not
    answer is 503, which sends the TA to another host."""
    fake, gate = FakeNode("fake"), Gate()
    with stack(fake, gate) as (ta, proxy, recorder):
        raw = client(ta).chat.completions.with_raw_response.create(**CHAT)
        inference_id = bytes.fromhex(raw.headers["x-inference-id"])
        assert gate.asked == [(inference_id, b"start|" + inference_id + b"|" + HOST.encode())]
        body = json.dumps(CHAT).encode()
        for refusal, status, code in (
            (ChainError("unpaid", "no start"), 402, "unpaid"),
            (RPCError("node unreachable"), 503, "chain_unavailable"),
        ):
            gate.refuse = refusal
            headers, content = forwarded(body)
            response = httpx.post(proxy + "/v1/chat/completions", content=content, headers=headers, timeout=10)
            assert response.status_code == status and response.json()["error"]["code"] == code, response.text
            assert gate.asked[-1] == (
                verify_signed(
                    *signed_headers({k.lower().encode(): v.encode() for k, v in headers.items()}),
                    content,
                    bech32.decode(TA_ADDRESS),
                ).inference_id,
                b"",
            )  # sent without a start: the gate gets b""
        assert len(fake.served) == 1 and len(recorder.settled(1)) == 1
        status = httpx.get(proxy + "/v1/executor/status", timeout=10).json()
        assert (status["served"], status["unpaid"]) == (1, 1)


@pytest.mark.parametrize("body", [b'{"a":1}', b"{}", b"{ }", b'{"a": [1, {"b": 2}] }\n', b' {"x":"}"}\t\r\n'])
def test_the_seed_splice_gives_the_signed_body_back(body: bytes) -> None:
    spliced = with_seed(body, 123)
    assert json.loads(spliced) == {**json.loads(body), "seed": 123}
    assert without_seed(spliced, "123") == body
    assert without_seed(spliced, "124") is None and without_seed(body, "123") is None


def test_check_forwarded_returns_the_requester_and_ta() -> None:
    body = json.dumps(CHAT).encode()
    headers, content = forwarded(body, seed=5)
    requester, ta, signed = check_forwarded({k.encode(): v.encode() for k, v in headers.items()}, content)
    assert (requester.address, ta, requester.body_hash) == (USER_ADDRESS, TA_ADDRESS, hashlib.sha256(body).digest())
    with pytest.raises(ApiError) as error:
        check_forwarded({k.encode(): v.encode() for k, v in headers.items()}, body)
    assert error.value.status == 401


def test_the_digest_of_a_stream_and_of_the_whole_answer_agree() -> None:
    lp = [{"token": "é", "logprob": -0.25, "bytes": [195, 169], "top_logprobs": []}]
    whole = {
        "choices": [
            {"index": 1, "message": {"content": "B"}, "logprobs": None},
            {"index": 0, "message": {"content": "é!"}, "logprobs": {"content": lp}},
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
    }
    finish = finish_of_answer(b"\x01" * 32, whole)
    assert finish is not None
    assert finish.response_hash == hashlib.sha256("é!B".encode()).digest()  # choices by index, then joined
    assert finish.logprobs_digest == hashlib.sha256(canonical_json([lp, []])).digest()
    assert (finish.prompt_tokens, finish.completion_tokens) == (4, 2)

    digest = Digest()
    for chunk in (
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"content": "é"}, "logprobs": {"content": lp}}]},
        {"choices": [{"index": 1, "delta": {"content": "B"}}]},
        {"choices": [{"index": 0, "delta": {"content": "!"}, "logprobs": {"content": []}}]},
        {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}},
    ):
        digest.event(chunk)
    assert digest.finish(b"\x01" * 32, counted=True) == finish

    counted = Digest()
    counted.event({"choices": [{"index": 0, "delta": {"content": "a"}}]})
    counted.event({"choices": [{"index": 0, "delta": {"content": "b"}}]})
    assert counted.tokens(counted=True) == (0, 2) and counted.tokens(counted=False) is None
    assert counted.logprobs_digest() == EMPTY
    assert finish_of_answer(b"\x01" * 32, {"choices": [{"index": 0, "message": {"content": "x"}}]}) is None


# --------------------------------------------------------------------------
# the Finisher over a scripted chain


class ScriptedFinishChain:
    """Inference records by id, a height, and the transactions the finisher sends."""

    def __init__(self) -> None:
        self.records: dict[bytes, inference_pb2.Inference] = {}
        self.height = 10
        self.sent: list[list[Any]] = []
        self.refuse: list[ChainError] = []

    def start(self, inference: bytes, executor: str = HOST, max_tokens: int = 8) -> None:
        self.records[inference] = inference_pb2.Inference(
            id=inference, executor=executor, max_tokens=max_tokens, status=inference_pb2.STATUS_STARTED
        )

    def query(self, path: str, request: query_pb2.QueryInferenceRequest, response_type: Any) -> Any:
        """``Query/Inference`` as a node answers it: unknown ids are an error."""
        assert path.endswith("/Inference")
        record = self.records.get(bytes.fromhex(request.id))
        if record is None:
            raise RPCError("not found")
        return query_pb2.QueryInferenceResponse(inference=record)

    def submit(self, messages: list[Any], gas: int | None = None) -> str:
        """One message a transaction: a lone finish, or several in one ``MsgFinishInferences``; recorded as the
        finishes it carries."""
        if self.refuse:
            raise self.refuse.pop(0)
        (message,) = messages
        batch = isinstance(message, tx_pb2.MsgFinishInferences)
        assert not batch or (len(message.finishes) > 1 and message.executor == HOST)
        self.sent.append(list(message.finishes) if batch else [message])
        return Sent(f"TX{len(self.sent)}", b"")

    def finish_sent(self) -> None:
        for message in self.sent[-1]:
            self.records[message.id].status = inference_pb2.STATUS_FINISHED


def scripted_finisher(chain: ScriptedFinishChain, clock: list[float], journal: Path | None = None) -> Finisher:
    finisher = Finisher(
        "tcp://127.0.0.1:9",
        HOST_KEY,
        confirm_blocks=2,
        max_sends=2,
        unknown_timeout_s=30,
        max_batch=2,
        journal=journal,
        clock=lambda: clock[0],
    )
    finisher.querier.query = chain.query  # type: ignore[method-assign]
    finisher.signer.submit = chain.submit  # type: ignore[method-assign]
    finisher.rpc.status = lambda: {"sync_info": {"latest_block_height": str(chain.height)}}  # type: ignore
    return finisher


def finish(i: int, completion: int = 3) -> Finish:
    return Finish(bytes([i]) * 32, TEXT_HASH, 5, completion, EMPTY)


def test_the_finisher_waits_for_the_start_batches_confirms_and_resends() -> None:
    chain, clock = ScriptedFinishChain(), [0.0]
    finisher = scripted_finisher(chain, clock)
    for i in (1, 2, 3):
        assert finisher.submit(finish(i, completion=20 if i == 3 else 3))
    assert not finisher.submit(finish(1)) and not finisher.submit(Finish(b"\x09" * 32, TEXT_HASH, 0, 0, EMPTY))
    finisher.step()
    assert chain.sent == []  # not on chain yet: the starts are still in the mempool
    for i in (1, 2, 3):
        chain.start(bytes([i]) * 32)
    finisher.step()
    assert [len(tx) for tx in chain.sent] == [2, 1]  # batches of max_batch
    assert chain.sent[1][0].completion_tokens == 8  # capped at the inference's max_tokens
    assert chain.sent[0][0].executor == HOST and chain.sent[0][0].response_hash == TEXT_HASH
    chain.finish_sent()  # the second tx made it, the first did not
    chain.height += 1
    finisher.step()
    assert len(chain.sent) == 2 and finisher.finished == 1  # 3 is done; 1, 2 wait confirm_blocks
    chain.height += 1
    finisher.step()
    assert [[m.id[0] for m in tx] for tx in chain.sent[2:]] == [[1, 2]]  # sent again
    chain.height += 2
    finisher.step()
    assert finisher.dropped == 2 and finisher.pending == {}  # still STARTED after max_sends: dropped
    assert [r["outcome"] for r in finisher.status()["recent"]] == ["finished", "dropped", "dropped"]


def test_the_finisher_drops_what_it_cannot_finish() -> None:
    chain, clock = ScriptedFinishChain(), [0.0]
    finisher = scripted_finisher(chain, clock)
    for i in (1, 2, 3, 4, 5):
        finisher.submit(finish(i))
    chain.start(b"\x02" * 32, executor=USER_ADDRESS)  # reassigned to another host
    chain.start(b"\x03" * 32)
    chain.records[b"\x03" * 32].status = inference_pb2.STATUS_EXPIRED
    chain.start(b"\x04" * 32)
    chain.start(b"\x05" * 32)
    chain.refuse = [
        ChainError("invalid", "batch"),
        ChainError("invalid", "bad", {"codespace": "inference", "code": "15"}),
        ChainError("invalid", "sequence", {"codespace": "sdk", "code": "32"}),
    ]
    finisher.step()
    assert finisher.status()["dropped"] == 2  # expired; refused by inference's own checks
    assert chain.sent == []  # 5's refusal (sequence) counts as a send and it is due again
    finisher.step()
    assert [[m.id[0] for m in tx] for tx in chain.sent] == [[5]]
    clock[0] = 31
    chain.records[b"\x02" * 32].status = inference_pb2.STATUS_FINISHED
    finisher.step()
    reasons = {r["id"][:2]: r["reason"] for r in finisher.status()["recent"]}
    assert reasons["01"].startswith("unknown on chain") and "another executor" in reasons["02"]
    assert reasons["03"] == "expired" and reasons["04"].startswith("refused")


def test_the_finisher_thread_finishes_and_stops() -> None:
    chain, clock = ScriptedFinishChain(), [0.0]
    finisher = scripted_finisher(chain, clock)
    finisher.poll_interval_s = 0.01
    finisher.start()
    finisher.submit(finish(1))
    chain.start(b"\x01" * 32)
    deadline = time.monotonic() + 5
    while not chain.sent:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    chain.finish_sent()
    finisher.submit(finish(2))  # never started: stop gives up on it after the drain
    started = time.monotonic()
    finisher.stop(drain_s=0.3)
    assert 0.25 < time.monotonic() - started < 5 and finisher.finished == 1
    assert list(finisher.pending) == [b"\x02" * 32]
    assert not any(t.name == "finisher" for t in threading.enumerate())


def test_unsettled_finishes_outlive_the_finisher(tmp_path: Path) -> None:
    """A finisher whose process dies leaves its unsettled finishes in the journal; the next one on the same path
    sends them, and never those that were settled (finished, or dropped for good)."""
    path = tmp_path / "executor-finishes.jsonl"
    chain, clock = ScriptedFinishChain(), [0.0]
    first = scripted_finisher(chain, clock, journal=path)
    for i in (1, 2, 3, 4):
        first.submit(finish(i, completion=i))
    chain.start(b"\x01" * 32)
    chain.start(b"\x02" * 32)
    chain.records[b"\x02" * 32].status = inference_pb2.STATUS_EXPIRED
    first.step()
    chain.finish_sent()
    first.step()
    assert (first.finished, first.dropped, sorted(first.pending)) == (1, 1, [b"\x03" * 32, b"\x04" * 32])
    # the process dies here: no stop, no close

    second = scripted_finisher(chain, clock, journal=path)
    assert [item.finish for item in second.pending.values()] == [finish(3, completion=3), finish(4, completion=4)]
    for i in (3, 4):
        chain.start(bytes([i]) * 32)
    second.step()
    assert [[m.id[0] for m in tx] for tx in chain.sent] == [[1], [3, 4]]  # 1 and 2 are not sent again
    chain.finish_sent()
    second.step()
    second.close()
    assert second.finished == 2 and scripted_finisher(chain, clock, journal=path).pending == {}


def test_a_torn_last_line_is_left_out(tmp_path: Path) -> None:
    """A write cut short by a crash leaves a torn last line: it is left out, and the journal rewritten, so what is
    appended next is whole."""
    path = tmp_path / "executor-finishes.jsonl"
    chain, clock = ScriptedFinishChain(), [0.0]
    first = scripted_finisher(chain, clock, journal=path)
    first.submit(finish(1))
    first.submit(finish(2))
    with path.open("ab") as journal:
        journal.write(b'{"settled":"' + (b"\x01" * 32).hex()[:20].encode())  # the settling of 1, cut short
    second = scripted_finisher(chain, clock, journal=path)
    assert sorted(second.pending) == [b"\x01" * 32, b"\x02" * 32]
    second.submit(finish(3))
    assert sorted(scripted_finisher(chain, clock, journal=path).pending) == [bytes([i]) * 32 for i in (1, 2, 3)]


def test_the_journal_is_compacted_as_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "executor-finishes.jsonl"
    journal = FinishJournal(path, compact_lines=4)
    for i in range(1, 41):
        journal.queued(finish(i))
        if i % 4:  # one in four stays pending
            journal.settled(bytes([i]) * 32)
        assert len(path.read_bytes().splitlines()) <= 2 * len(journal.pending) + 4 + 1
    journal.close()
    reopened = FinishJournal(path)
    assert list(reopened.pending) == [bytes([i]) * 32 for i in range(4, 41, 4)]
    assert len(path.read_bytes().splitlines()) == 10  # rewritten when opened: the pending ones alone
    reopened.close()


def test_executor_start_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    """``gonkad executor start``: bad arguments, a missing key and an unreachable node are one ``Error:`` line and
    exit code 1, with no pid file left behind."""
    base = ["--home", str(tmp_path), "--keyring-backend", "test", "--mlnode", "http://127.0.0.1:8080"]
    assert (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gonkad",
                "keys",
                "add",
                "host",
                "--home",
                str(tmp_path),
                "--keyring-backend",
                "test",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        ).returncode
        == 0
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nowhere = s.getsockname()[1]
    for args, words in (
        (["--from", "host", "--port", "http"], "invalid --port"),
        (["--from", "host", "--node", "nowhere"], "invalid --node"),
        (["--from", "host", "--grpc-addr", "127.0.0.1"], "invalid --grpc-addr"),
        (["--from", "host", "--mlnode", "https://x"], "invalid --mlnode"),
        (["--from", "host", "--gas", "0"], "invalid --gas"),
        (["--from", "host", "--max-batch", "0"], "invalid --max-batch"),
        (["--from", "host", "--drain-s", "soon"], "invalid --drain-s"),
        (["--from", "host", "--sprint-chunk", "0"], "invalid --sprint-chunk"),
        (["--from", "host", "--poc-retention-s", "0"], "invalid --poc-retention-s"),
        (["--from", "nobody"], "nobody"),
        (["--from", "host", "--node", f"tcp://127.0.0.1:{nowhere}", "--port", "0"], "unreachable"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "gonkad", "executor", "start", *base, *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: "), (args, done.stderr)
        assert words in lines[0], (args, lines)
        assert not (tmp_path / "executor.pid").exists()


TA2_KEY = secp256k1.PrivateKey(hashlib.sha256(b"executor ta 2").digest())
TA2_ADDRESS = bech32.encode(secp256k1.address_bytes(TA2_KEY.public_key))


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_failing_over_after_its_answer_gets_it_again_paid_once(stream: bool) -> None:
    """The first TA got the answer (the host finished it) but its client did not: the client sends the same
    body and timestamp through a second TA, whose chain says the inference is FINISHED by this host. The second
    TA asks the host with the same signed request and relays the answer the host kept: the same bytes, the node
    not asked again, no second finish, nothing started again. Without a kept answer it stays 409."""
    fake = FakeNode("fake")
    with stack(fake) as (ta, proxy, recorder):
        body = json.dumps({**CHAT, "stream": stream}).encode()
        timestamp = time.time_ns()

        def send(url: str, address: str) -> httpx.Response:
            return httpx.post(
                f"{url}/v1/chat/completions",
                content=body,
                timeout=10,
                headers={**request_headers(USER, body, address, timestamp), "Content-Type": "application/json"},
            )

        first = send(ta, TA_ADDRESS)
        assert first.status_code == 200 and len(fake.served) == 1 and len(recorder.settled(1)) == 1
        inference_id = bytes.fromhex(first.headers["x-inference-id"])
        chain = ScriptedChain(
            [MODEL],
            [Node(HOST, "n0", proxy, ("m1",), 1 << 30, 8, 10)],
            {USER_ADDRESS: 10**9},
            refuse=ChainError("already_exists", "inference already finished"),
            finished={inference_id: HOST},
        )
        with serve(Agent(AgentConfig(key=TA2_KEY, chain=chain)), lifespan="on") as ta2:
            again = send(ta2, TA2_ADDRESS)
            assert again.status_code == 200, again.text
            assert again.content == first.content and again.headers["x-inference-id"] == inference_id.hex()
            assert (len(fake.served), len(recorder.finishes), chain.starts) == (1, 1, [])
            assert "gonka_ta_answered_again_total 1" in httpx.get(f"{ta2}/metrics", timeout=10).text
            chain.finished.clear()  # the chain has it otherwise: the refusal stands
            body = json.dumps({**CHAT, "stream": stream, "max_tokens": 7}).encode()
            refused = send(ta2, TA2_ADDRESS)
            assert refused.status_code == 409 and refused.json()["error"]["code"] == "already_exists"
        assert httpx.get(proxy + "/v1/executor/status", timeout=10).json()["replayed"] == 1


@pytest.mark.parametrize("value", [1, "true", "yes", 0, "false", []])
def test_a_stream_that_is_not_a_boolean_is_refused_at_every_hop(value: Any) -> None:
    """``"stream": 1`` (or "true", "yes", …) must not make one hop stream while another sees no stream (an answer
    nobody finishes): the TA, the executor and the ML node's own schema each refuse it with a 400."""
    fake, gate = FakeNode("fake"), Gate()
    with stack(fake, gate) as (ta, proxy, recorder):
        body = json.dumps({**CHAT, "stream": value}).encode()
        through_ta = httpx.post(
            f"{ta}/v1/chat/completions",
            content=body,
            timeout=10,
            headers={**request_headers(USER, body, TA_ADDRESS), "Content-Type": "application/json"},
        )
        headers, content = forwarded(body, seed=3)
        gate.escrow(json.dumps({**CHAT, "seed": 3}).encode(), bytes.fromhex(headers["x-inference-id"]))
        direct = httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=10)
        for response in (through_ta, direct):
            assert response.status_code == 400, response.text
            assert response.json()["error"]["param"] == "stream"
        assert (fake.served, recorder.finishes, gate.chain.starts, gate.confirmed) == ([], [], [], [])
    with pytest.raises(ValueError, match="stream"):
        ChatCompletionRequest.model_validate({**CHAT, "stream": value})


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "7", True])
def test_a_seed_the_chain_cannot_hold_is_a_400(seed: Any) -> None:
    fake = FakeNode("fake")
    with stack(fake) as (ta, _, _):
        body = json.dumps({**CHAT, "seed": seed}).encode()
        response = httpx.post(
            f"{ta}/v1/chat/completions",
            content=body,
            timeout=10,
            headers={**request_headers(USER, body, TA_ADDRESS), "Content-Type": "application/json"},
        )
        assert response.status_code == 400 and response.json()["error"]["param"] == "seed", response.text
        assert fake.served == []


def test_the_start_terms_bind_the_answer() -> None:
    """A start escrowing 1 token for a body asking 200 (a TA of the requester's own): the executor refuses it,
    402 ``terms_mismatch``, and its node answers nothing; so for another model, seed or sampling parameters.
    A body leaving max_tokens to the TA's default is sent to the node with the escrowed max_tokens."""
    fake, gate = FakeNode("fake"), Gate()
    with stack(fake, gate) as (_, proxy, recorder):
        asked = json.dumps({**CHAT, "max_tokens": 200, "seed": 5}).encode()
        for escrowed, words in (
            (json.dumps({**CHAT, "max_tokens": 1, "seed": 5}), "200 tokens"),
            (json.dumps({**CHAT, "max_tokens": 200, "seed": 6}), "seed 5"),
            (json.dumps({**CHAT, "max_tokens": 200, "seed": 5, "temperature": 0}), "sampling"),
            (json.dumps({**CHAT, "model": "m2", "max_tokens": 200, "seed": 5}), "'m1'"),
        ):
            headers, content = forwarded(asked)
            gate.escrow(escrowed.encode(), bytes.fromhex(headers["x-inference-id"]))
            response = httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=10)
            assert response.status_code == 402, response.text
            assert response.json()["error"]["code"] == "terms_mismatch" and words in response.json()["error"]["message"]
        assert (fake.served, recorder.finishes) == ([], [])
        no_limit = {key: value for key, value in CHAT.items() if key != "max_tokens"}
        headers, content = forwarded(json.dumps(no_limit).encode(), seed=9)
        gate.escrow(content, bytes.fromhex(headers["x-inference-id"]), max_tokens=4)
        assert (
            httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=10).status_code == 200
        )
        assert fake.served[-1]["max_tokens"] == 4


class HeldGate(Gate):
    """A gate whose ``confirm`` waits for ``release`` (the start's block), then confirms or refuses."""

    def __init__(self, refuse_confirm: bool = False) -> None:
        super().__init__()
        self.release, self.refuse_confirm = threading.Event(), refuse_confirm

    def admit(self, inference_id: bytes, start_tx: bytes) -> Any:
        super().admit(inference_id, start_tx)
        return self.records[inference_id]  # the start the TA sent along carries the terms

    def confirm(self, inference_id: bytes) -> inference_pb2.Inference:
        assert self.release.wait(10)
        if self.refuse_confirm:
            raise ChainError("unpaid", "the start was refused in its block")
        return super().confirm(inference_id)


@pytest.mark.parametrize("refused", [False, True])
def test_nothing_leaves_the_host_before_the_start_is_committed(refused: bool) -> None:
    """The node works while the start goes into a block, but the TA gets no byte before the chain has it; a start
    the block refused (the requester spent its funds meanwhile) is a 402, and the node's answer is dropped."""
    fake, gate = FakeNode("fake"), HeldGate(refuse_confirm=refused)
    with stack(fake, gate) as (_, proxy, recorder):
        headers, content = forwarded(json.dumps({**CHAT, "stream": True}).encode(), seed=1)
        gate.escrow(content, bytes.fromhex(headers["x-inference-id"]))
        answered: list[httpx.Response] = []
        poster = threading.Thread(
            target=lambda: answered.append(
                httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=20)
            )
        )
        poster.start()
        deadline = time.monotonic() + 10
        while not fake.served and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(fake.served) == 1  # the node was asked at once …
        time.sleep(0.3)
        assert answered == []  # … but nothing came back before the start was in a block
        gate.release.set()
        poster.join(20)
        if refused:
            assert answered[0].status_code == 402 and answered[0].json()["error"]["code"] == "unpaid"
            assert recorder.finishes == []
        else:
            assert answered[0].status_code == 200 and b"[DONE]" in answered[0].content
            assert len(recorder.settled(1)) == 1


def test_the_same_signed_request_twice_at_once_is_answered_once() -> None:
    """Through two TAs at the same moment (or twice through one): the second waits for the first and gets its
    kept answer; the node answers once and one finish is made."""
    fake, gate = FakeNode("fake", delay_s=0.1), Gate()
    with stack(fake, gate) as (_, proxy, recorder):
        headers, content = forwarded(json.dumps(CHAT).encode(), seed=2)
        gate.escrow(content, bytes.fromhex(headers["x-inference-id"]))
        answers: list[httpx.Response] = []

        def post() -> None:
            answers.append(httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=20))

        threads = [threading.Thread(target=post) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert [a.status_code for a in answers] == [200, 200] and answers[0].content == answers[1].content
        assert (len(fake.served), len(recorder.settled(1))) == (1, 1)
        assert httpx.get(proxy + "/v1/executor/status", timeout=10).json()["replayed"] == 1


def test_a_start_while_the_tas_node_restarts_is_tried_again_not_refused() -> None:
    """The TA's node does not answer for a moment (restarting): the balance read and the start are tried again
    and the request is answered; a node that stays away past ``chain_retry_s`` is 503, never a 402."""
    fake = FakeNode("fake")

    class Restarting(ScriptedChain):
        down = 3

        def start_inference(self, request: Any) -> bytes:
            if self.down:
                self.down -= 1
                raise RPCError("node 127.0.0.1:26657 unreachable: connection refused")
            return super().start_inference(request)

    gate = Gate()
    with (
        serve(fake) as node_url,
        serve(Executor(ExecutorConfig(mlnode=node_url, finisher=Recorder(), admission=gate)), lifespan="on") as proxy,
    ):
        chain = gate.chain = Restarting(
            [MODEL], [Node(HOST, "n0", proxy, ("m1",), 1 << 30, 8, 10)], {USER_ADDRESS: 10**9}
        )
        with serve(Agent(AgentConfig(key=TA_KEY, chain=chain, chain_retry_s=5)), lifespan="on") as ta:
            chat = client(ta)
            assert chat.chat.completions.create(**CHAT).choices[0].message.content == "fake says hi"
            assert "gonka_ta_chain_retries_total 3" in httpx.get(f"{ta}/metrics", timeout=10).text
        chain.down = 1000
        with serve(Agent(AgentConfig(key=TA_KEY, chain=chain, chain_retry_s=0.3)), lifespan="on") as ta:
            with pytest.raises(openai.InternalServerError) as failure:
                client(ta).chat.completions.create(**CHAT)
            assert failure.value.status_code == 503 and failure.value.code == "chain_unavailable"


def test_the_ta_admits_only_timestamps_the_chain_will_take_where_its_start_lands() -> None:
    """The chain takes a request stamped at most 30 s after (60 s before) its block's time; the block's time may be
    seconds from the TA's clock, so the TA's window is the chain's less 10 s: 25 s ahead is refused at once (401),
    never answered and then refused in the block."""
    fake = FakeNode("fake")
    with stack(fake) as (ta, _, _):
        body = json.dumps(CHAT).encode()
        for offset_s in (25, -55):
            stamp = time.time_ns() + offset_s * 10**9
            response = httpx.post(
                f"{ta}/v1/chat/completions",
                content=body,
                timeout=10,
                headers={**request_headers(USER, body, TA_ADDRESS, stamp), "Content-Type": "application/json"},
            )
            assert response.status_code == 401 and response.json()["error"]["code"] == "stale_timestamp"
        assert fake.served == []


async def no_usage_node(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An upstream that answers without ``usage``: nothing tells the host how many tokens it served."""
    if scope["type"] != "http":
        return
    await receive()
    answer = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    await respond(send, 200, json.dumps(answer).encode())


def test_an_answer_that_cannot_be_finished_is_counted_unfinished() -> None:
    """Relayed, but with no token count to finish it by: not ``served`` (nothing is paid for it; it is refunded
    when it expires) but ``unfinished``, so a host's accounting (served = paid) still adds up."""
    gate, recorder = Gate(), Recorder()
    with (
        serve(no_usage_node) as node_url,
        serve(Executor(ExecutorConfig(mlnode=node_url, finisher=recorder, admission=gate)), lifespan="on") as proxy,
    ):
        headers, content = forwarded(json.dumps(CHAT).encode(), seed=4)
        gate.escrow(content, bytes.fromhex(headers["x-inference-id"]))
        response = httpx.post(f"{proxy}/v1/chat/completions", content=content, headers=headers, timeout=10)
        assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == "hi"
        status = httpx.get(proxy + "/v1/executor/status", timeout=10).json()
        assert (status["served"], status["unfinished"], recorder.finishes) == (0, 1, [])
