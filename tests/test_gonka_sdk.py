"""The client SDK (``gonka/``) against two real Transfer Agents (``agent.server.Agent`` under uvicorn on
loopback), each on its own ``ScriptedChain`` over its own fake ML node (tests/agent_fakes.py): answers,
discovery, failover with the same inference id, errors that are not retried, forged identities skipped."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest
import uvicorn
from agent_fakes import FakeNode, ScriptedChain

from agent.chain import Model, Node
from agent.config import AgentConfig
from agent.server import Agent
from gonka import Gonka
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id

MODEL = Model("m1", context_length=512, price_per_token=2)
USER = secp256k1.PrivateKey(hashlib.sha256(b"sdk user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
POOR = secp256k1.PrivateKey(hashlib.sha256(b"sdk poor").digest())
TA_KEYS = [secp256k1.PrivateKey(hashlib.sha256(f"sdk ta {i}".encode()).digest()) for i in range(3)]
TA_ADDRESSES = [bech32.encode(secp256k1.address_bytes(key.public_key)) for key in TA_KEYS]
OPERATORS = [bech32.encode(hashlib.sha256(b"operator %d" % i).digest()[:20]) for i in range(2)]
CHAT: dict[str, Any] = {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}
UNREACHABLE = "http://127.0.0.1:9"


@dataclass
class CountingChain(ScriptedChain):
    """A ScriptedChain that also records whose balance the TA asked for (every request that got past the
    signature check asks once)."""

    asked: list[str] = field(default_factory=list)

    def spendable(self, address: str, denom: str) -> int:
        self.asked.append(address)
        return super().spendable(address, denom)


@contextmanager
def served(app: Any, lifespan: str) -> Iterator[tuple[str, Callable[[], None]]]:
    """``app`` under uvicorn on loopback; yields its URL and ``kill``, which resets every open connection and
    stops the server at once (a crash, not a graceful stop). Stopped however the block ends."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan=lifespan, timeout_graceful_shutdown=2))
    listener = socket.create_server(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()

    def kill() -> None:
        server.force_exit = server.should_exit = True
        for connection in list(server.server_state.connections):
            connection.loop.call_soon_threadsafe(connection.transport.abort)  # type: ignore[attr-defined]
        thread.join(timeout=15)

    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", kill
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


@dataclass
class TA:
    url: str
    chain: ScriptedChain
    node: FakeNode
    kill: Callable[[], None]


@contextmanager
def network(*fakes: FakeNode) -> Iterator[list[TA]]:
    """One TA per fake node, each on its own chain; every TA lists the others in its identity."""
    with ExitStack() as stack:
        tas = []
        for i, fake in enumerate(fakes):
            node_url, _ = stack.enter_context(served(fake, "off"))
            chain = CountingChain(
                [MODEL], [Node(OPERATORS[i], f"node{i}", node_url, ("m1",), 1 << 30, 8, 10)], {USER_ADDRESS: 10**9}
            )
            agent = Agent(AgentConfig(key=TA_KEYS[i], chain=chain, poll_interval_s=0.05))
            url, kill = stack.enter_context(served(agent, "on"))
            tas.append(TA(url, chain, fake, kill))
        for ta in tas:
            ta.chain.tas_.extend(other.url for other in tas if other is not ta)
        yield tas


class Recording(httpx.HTTPTransport):
    """The SDK's transport towards the TAs, recording each POST: (TA URL, body, X-Timestamp, signature)."""

    def __init__(self) -> None:
        super().__init__()
        self.posts: list[tuple[str, bytes, int, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts.append(
                (
                    f"{request.url.scheme}://{request.url.netloc.decode()}",
                    request.content,
                    int(request.headers["x-timestamp"]),
                    request.headers["authorization"],
                )
            )
        return super().handle_request(request)


def starts(*tas: TA) -> list[bytes]:
    return [start.inference_id for ta in tas for start in ta.chain.starts]


def wait_until(condition: Callable[[], bool], failure: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


# --------------------------------------------------------------------------


def test_chat_and_stream_and_discovery_from_one_url() -> None:
    with network(FakeNode("a"), FakeNode("b")) as (ta1, ta2):
        recording = Recording()
        with Gonka([ta1.url], USER.secret.hex(), timeout=10, transport=recording) as client:
            assert [(ta.url, ta.address) for ta in client.tas] == [
                (ta1.url, TA_ADDRESSES[0]),
                (ta2.url, TA_ADDRESSES[1]),
            ]
            assert client.address == USER_ADDRESS
            answer = client.chat.completions.create(**CHAT, logprobs=True, extra_body={"fee_per_token": 3})
            assert answer.choices[0].message.content == "a says hi"
            assert answer.choices[0].logprobs is not None
            start = ta1.chain.starts[-1]
            assert client.last_inference_id == start.inference_id.hex()
            assert (start.requester, start.ta_address, start.fee_per_token) == (USER_ADDRESS, TA_ADDRESSES[0], 3)
            _, body, timestamp, _ = recording.posts[-1]
            assert start.body_hash == hashlib.sha256(body).digest() and start.timestamp_ns == timestamp
            assert client.inference_id(body, timestamp) == start.inference_id.hex()
            chunks = list(client.chat.completions.create(**CHAT, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks) == "a says hi"
            assert chunks[-1].choices[0].finish_reason == "stop"
            assert client.last_inference_id == ta1.chain.starts[-1].inference_id.hex()
            assert [m.id for m in client.models.list().data] == ["m1"]
            assert len(ta1.chain.starts) == 2 and ta2.chain.starts == [] and client.last_ta is not None
            assert client.last_ta.url == ta1.url


def test_a_crashed_ta_mid_load_fails_over_and_each_request_is_answered_once() -> None:
    """40 requests from 8 threads, TA 1 first: the first 10 are answered by TA 1; the next 8 are started by TA 1
    and held at its node when it crashes, so each fails over to TA 2 with the same body, timestamp and inference
    id; the last 22 are sent only after the crash and answered by TA 2. Each request is answered once, and
    nothing is started on a chain that went unanswered."""
    total, first, held = 40, 10, 8
    node_a = threading.Event()  # node a answers while set
    node_a.set()
    with network(FakeNode("a", delay_s=0.01, hold=node_a), FakeNode("b", delay_s=0.01)) as (ta1, ta2):
        try:
            recording = Recording()
            client = Gonka([ta1.url, ta2.url], USER, timeout=10, transport=recording)
            second_wave, crashed = threading.Event(), threading.Event()

            def ask(i: int) -> tuple[str, str]:
                if i >= first:  # the held wave once released, the rest once TA 1 has crashed
                    assert (second_wave if i < first + held else crashed).wait(60), f"request {i} never released"
                raw = client.chat.completions.with_raw_response.create(
                    **{**CHAT, "messages": [{"role": "user", "content": f"question {i}"}]}
                )
                return raw.headers["x-inference-id"], raw.parse().choices[0].message.content or ""

            with ThreadPoolExecutor(held) as pool:
                futures = [pool.submit(ask, i) for i in range(total)]
                answers = [future.result(timeout=30) for future in futures[:first]]
                node_a.clear()
                second_wave.set()
                wait_until(
                    lambda: len(ta1.chain.starts) == first + held and ta1.node.in_flight == held,
                    "TA 1 did not start and forward the held requests",
                )
                ta1.kill()  # with 8 requests started and unanswered, and 22 not yet sent
                crashed.set()
                answers += [future.result(timeout=30) for future in futures[first:]]
            chunks = list(client.chat.completions.create(**CHAT, stream=True))  # a stream cut mid-way is not
            assert "".join(c.choices[0].delta.content or "" for c in chunks) == "b says hi"  # retried: none then
            client.close()
        finally:
            node_a.set()
        ids = [answer_id for answer_id, _ in answers] + [client.last_inference_id]
        assert len(set(ids)) == total + 1  # every request answered, each once
        assert [text for _, text in answers] == ["a says hi"] * first + ["b says hi"] * (total - first)
        assert {i.hex() for i in starts(ta1)} == set(ids[: first + held]) and len(ta1.chain.starts) == first + held
        assert {i.hex() for i in starts(ta2)} == set(ids[first:]) and len(ta2.chain.starts) == total - first + 1
        assert len(ta1.node.served) == first  # the held ones were never answered by node a
        posts: dict[str, list[tuple[str, bytes, int, str]]] = {}
        for post in recording.posts:
            content = json.loads(post[1])["messages"][0]["content"]
            posts.setdefault(content, []).append(post)
        for i in range(first, first + held):  # failed over: the same body and timestamp, re-signed for TA 2
            (url1, body1, stamp1, signature1), (url2, body2, stamp2, signature2) = posts[f"question {i}"]
            assert (url1, url2) == (ta1.url, ta2.url) and (body1, stamp1) == (body2, stamp2)
            assert signature1 != signature2
        assert all(post[0] == ta1.url for i in range(first) for post in posts[f"question {i}"])
        assert all(posts[f"question {i}"][-1][0] == ta2.url for i in range(first + held, total))
        assert client.last_ta is not None and client.last_ta.url == ta2.url


def test_a_ta_that_accepted_then_died_is_retried_with_the_same_inference_id() -> None:
    gate = threading.Event()
    with network(FakeNode("a", hold=gate), FakeNode("b")) as (ta1, ta2):
        try:
            recording = Recording()
            client = Gonka([ta1.url], USER, timeout=10, transport=recording)
            with ThreadPoolExecutor(1) as pool:
                future = pool.submit(client.chat.completions.create, **CHAT)
                wait_until(
                    lambda: len(ta1.chain.starts) == 1 and ta1.node.in_flight == 1, "TA 1 did not start the inference"
                )
                ta1.kill()  # after the chain started it, before any answer
                answer = future.result(timeout=15)
            assert answer.choices[0].message.content == "b says hi"
            first, retried = ta1.chain.starts[0], ta2.chain.starts[0]
            assert len(ta1.chain.starts) == len(ta2.chain.starts) == 1
            assert first.inference_id == retried.inference_id
            assert client.last_inference_id == first.inference_id.hex()
            assert (first.body_hash, first.timestamp_ns) == (retried.body_hash, retried.timestamp_ns)
            assert (first.ta_address, retried.ta_address) == (TA_ADDRESSES[0], TA_ADDRESSES[1])
            assert [url for url, *_ in recording.posts] == [ta1.url, ta2.url]
            (_, body1, stamp1, signature1), (_, body2, stamp2, signature2) = recording.posts
            assert (body1, stamp1) == (body2, stamp2) and signature1 != signature2  # re-signed for TA 2
            assert ta2.node.served and not ta1.node.served
            client.close()
        finally:
            gate.set()


def test_a_ta_answering_503_mid_series_fails_over() -> None:
    with network(FakeNode("a"), FakeNode("b")) as (ta1, ta2):
        client = Gonka([ta1.url, ta2.url], USER, timeout=10)
        answers = [client.chat.completions.create(**CHAT).choices[0].message.content for _ in range(3)]
        ta1.chain.nodes_ = []  # TA 1 loses its node: 503 no_capable_node
        wait_until(lambda: httpx.get(f"{ta1.url}/v1/status").json()["nodes"] == [], "TA 1 still has its node")
        answers += [client.chat.completions.create(**CHAT).choices[0].message.content for _ in range(3)]
        chunks = list(client.chat.completions.create(**CHAT, stream=True))
        assert answers == ["a says hi"] * 3 + ["b says hi"] * 3
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "b says hi"
        assert len(ta1.chain.starts) == 3 and len(ta2.chain.starts) == 4
        assert len(set(starts(ta1, ta2))) == 7
        assert len(ta1.chain.asked) == 4  # the 503 came once: the next requests went to TA 2 first
        ta2.chain.nodes_ = []  # every TA fails: the last 503 surfaces as the openai client's error
        wait_until(lambda: httpx.get(f"{ta2.url}/v1/status").json()["nodes"] == [], "TA 2 still has its node")
        with pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(**CHAT)
        assert raised.value.status_code == 503 and raised.value.code == "no_capable_node"
        client.close()


def test_4xx_is_not_retried() -> None:
    with network(FakeNode("a"), FakeNode("b")) as (ta1, ta2):
        poor = bech32.encode(secp256k1.address_bytes(POOR.public_key))
        with Gonka([ta1.url, ta2.url], POOR, timeout=10) as client:
            with pytest.raises(openai.APIStatusError) as raised:
                client.chat.completions.create(**CHAT)
            assert raised.value.status_code == 402 and raised.value.code == "insufficient_funds"
            with pytest.raises(openai.NotFoundError):
                client.chat.completions.create(**{**CHAT, "model": "gpt-9"})
            assert client.last_inference_id is None
        assert ta1.chain.asked == [poor] and ta2.chain.asked == []  # only TA 1 saw them
        assert starts(ta1, ta2) == []


def test_forged_and_unreachable_tas_are_skipped() -> None:
    posts: list[str] = []

    def forge(agent: Agent) -> Any:
        """The TA's identity claiming another TA's address (its own key's signature, so it cannot verify)."""

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/v1/identity":
                document = {**agent.identity_document(), "address": TA_ADDRESSES[1]}
                body = json.dumps(document).encode()
                await send(
                    {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
                )
                await send({"type": "http.response.body", "body": body})
                return
            if scope["type"] == "http" and scope["method"] == "POST":
                posts.append(scope["path"])
            await agent(scope, receive, send)

        return app

    chain = ScriptedChain([MODEL], [], {USER_ADDRESS: 10**9})
    with network(FakeNode("b")) as (honest,):
        with served(forge(Agent(AgentConfig(key=TA_KEYS[2], chain=chain))), "on") as (forged, _):
            honest.chain.tas_.append(forged)  # listed by an honest TA: still skipped
            with Gonka([UNREACHABLE, forged, honest.url], USER, timeout=5) as client:
                assert [ta.url for ta in client.tas] == [honest.url]
                assert client.chat.completions.create(**CHAT).choices[0].message.content == "b says hi"
            assert posts == [] and chain.starts == [] and len(honest.chain.starts) == 1
    with Gonka([UNREACHABLE], USER, timeout=5) as nobody:
        with pytest.raises(openai.APIConnectionError):
            nobody.chat.completions.create(**CHAT)


def test_inference_id_helper_matches_the_sdk() -> None:
    client = Gonka(["http://ta.example"], USER)
    body, stamp = b'{"model":"m1"}', 1_700_000_000_000_000_000
    expected = inference_id(secp256k1.address_bytes(USER.public_key), hashlib.sha256(body).digest(), stamp)
    assert client.inference_id(body, stamp) == expected.hex()
    with pytest.raises(ValueError):
        Gonka([], USER)


def test_an_idle_connection_is_dropped_before_any_server_closes_it() -> None:
    """A request written to a pooled connection just as the server closes it is lost unanswered, and with one TA
    down that failure is the request's last. The SDK's pool drops idle connections well before the TAs' keep-alive
    (and uvicorn's default 5 s) ends: a connection idle past ``KEEPALIVE_EXPIRY_S`` is not reused."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from gonka.transport import KEEPALIVE_EXPIRY_S, FailoverTransport
    from sdk.http.asgi import KEEP_ALIVE_S

    assert KEEPALIVE_EXPIRY_S + 2 <= min(KEEP_ALIVE_S, uvicorn.Config(None).timeout_keep_alive)
    connections: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            connections.append(self.client_address[1])

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    transport = FailoverTransport(USER, [], timeout=5, max_retries=0)
    try:
        with httpx.Client(transport=transport.inner) as client:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            for pause in (0.0, 0.2, KEEPALIVE_EXPIRY_S + 0.5):
                time.sleep(pause)
                assert client.get(url).text == "ok"
        assert len(connections) == 2, connections  # the first two on one connection; after the pause, a new one
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
