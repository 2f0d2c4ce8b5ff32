"""The Transfer Agent (agent/) end to end on loopback: real uvicorn servers for the TA and for fake ML nodes
(tests/agent_fakes.py), one real ML node (tiny preset), a scripted in-memory ChainView, and the official
``openai`` client signing every request through ``sdk.client.signing.SignedRequests``."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from agent_fakes import FakeNode, ScriptedChain
from servers import serve

from agent.chain import ChainError, Model, Node
from agent.config import AgentConfig
from agent.server import Agent
from sdk.client.process import stop_child
from sdk.client.signing import SignedRequests, request_headers, verify_identity
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id, verify_request

PRICE = 2
MODEL = Model("m1", context_length=512, price_per_token=PRICE)
USER = secp256k1.PrivateKey(hashlib.sha256(b"user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
POOR = secp256k1.PrivateKey(hashlib.sha256(b"poor").digest())
TA_KEY = secp256k1.PrivateKey(hashlib.sha256(b"ta").digest())
TA_ADDRESS = bech32.encode(secp256k1.address_bytes(TA_KEY.public_key))
OPERATORS = [bech32.encode(hashlib.sha256(bytes([i])).digest()[:20]) for i in range(4)]
ROOT = Path(__file__).resolve().parent.parent
CHAT: dict[str, Any] = {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


def node(i: int, url: str, weight: int = 10, max_concurrency: int = 8, models: tuple[str, ...] = ("m1",)) -> Node:
    return Node(OPERATORS[i], f"node{i}", url, models, 1 << 30, max_concurrency, weight)


@contextmanager
def network(
    *fakes: FakeNode, weights: tuple[int, ...] = (), balance: int = 10**9, **config: Any
) -> Iterator[tuple[str, ScriptedChain, list[str]]]:
    """Fake nodes and a TA in front of them; yields the TA's URL, the chain and the nodes' URLs."""
    with ExitStack() as stack:
        urls = [stack.enter_context(serve(fake)) for fake in fakes]
        nodes = [
            node(i, url, weights[i] if weights else 10, fake.max_concurrency)
            for i, (url, fake) in enumerate(zip(urls, fakes))
        ]
        chain = ScriptedChain([MODEL], nodes, {USER_ADDRESS: balance}, ["http://ta-2.example"])
        agent = Agent(AgentConfig(key=TA_KEY, chain=chain, **config))
        yield stack.enter_context(serve(agent, lifespan="on")), chain, urls


def client(
    ta: str, key: secp256k1.PrivateKey = USER, clock: Callable[[], int] = time.time_ns, ta_address: str = TA_ADDRESS
) -> openai.OpenAI:
    http = httpx.Client(auth=SignedRequests(key, ta_address, clock), timeout=30)
    return openai.OpenAI(base_url=f"{ta}/v1", api_key="unused", http_client=http, max_retries=0)


def signed_post(ta: str, body: bytes, key: secp256k1.PrivateKey = USER, **headers: str) -> httpx.Response:
    signed = request_headers(key, body, TA_ADDRESS)
    signed.update({name.replace("_", "-"): value for name, value in headers.items()})
    return httpx.post(f"{ta}/v1/chat/completions", content=body, headers=signed, timeout=30)


def assert_error(response: httpx.Response, status: int, code: str | None, kind: str | None = None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["message"] and error["code"] == code
    assert set(error) >= {"message", "type", "code"}
    if kind is not None:
        assert error["type"] == kind


def status_of(ta: str) -> dict[str, Any]:
    return httpx.get(f"{ta}/v1/status").json()


def wait_until(condition: Callable[[], bool], failure: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


# --------------------------------------------------------------------------
# answers


def test_chat_and_stream_through_the_ta() -> None:
    with network(FakeNode("a")) as (ta, chain, _):
        answer = client(ta).chat.completions.create(
            **CHAT, logprobs=True, top_logprobs=2, extra_body={"fee_per_token": 3}
        )
        assert answer.choices[0].message.content == "a says hi"
        assert answer.choices[0].logprobs is not None and answer.choices[0].logprobs.content is not None
        assert [t.token for t in answer.choices[0].logprobs.content] == ["a ", "says ", "hi"]
        assert len(answer.choices[0].logprobs.content[0].top_logprobs) == 2
        chunks = list(client(ta).chat.completions.create(**CHAT, stream=True, logprobs=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "a says hi"
        assert chunks[1].choices[0].logprobs is not None and chunks[-1].choices[0].finish_reason == "stop"
        assert len(chain.starts) == 2
        start = chain.starts[0]
        assert (
            start.requester,
            start.model,
            start.max_tokens,
            start.fee_per_token,
            start.executor,
            start.node_id,
            start.ta_address,
            start.reassign,
        ) == (USER_ADDRESS, "m1", 8, 3, OPERATORS[0], "node0", TA_ADDRESS, False)
        assert verify_request(
            USER.public_key,
            start.body_hash,
            start.timestamp_ns,
            secp256k1.address_bytes(TA_KEY.public_key),
            start.signature,
        )
        assert start.inference_id == inference_id(
            secp256k1.address_bytes(USER.public_key), start.body_hash, start.timestamp_ns
        )
        assert answer.model_extra is not None and answer.model_extra["seed"] == start.seed
        assert chain.starts[0].inference_id != chain.starts[1].inference_id


def test_models_lists_the_registry() -> None:
    with network(FakeNode("a")) as (ta, _, _):
        models = openai.OpenAI(base_url=f"{ta}/v1", api_key="unused").models.list().data
        assert [m.id for m in models] == ["m1"] and models[0].object == "model"
        assert models[0].model_extra == {"context_length": 512, "price_per_token": PRICE}


# --------------------------------------------------------------------------
# refusals: each a clear OpenAI error, nothing started on chain


def test_refusals_start_nothing() -> None:
    body = json.dumps(CHAT).encode()
    with network(FakeNode("a")) as (ta, chain, _):
        cases: list[tuple[str, httpx.Response, int, str | None]] = []
        unsigned = httpx.post(f"{ta}/v1/chat/completions", content=body, headers={"authorization": "Bearer sk-x"})
        cases.append(("missing signature", unsigned, 401, "missing_signature"))
        other_ta = bech32.encode(bytes(20))
        wrong_ta = request_headers(USER, body, other_ta)
        cases.append(
            (
                "signed for another TA",
                httpx.post(f"{ta}/v1/chat/completions", content=body, headers=wrong_ta),
                401,
                "invalid_signature",
            )
        )
        tampered = request_headers(USER, body, TA_ADDRESS)
        cases.append(
            (
                "body changed after signing",
                httpx.post(f"{ta}/v1/chat/completions", content=body + b" ", headers=tampered),
                401,
                "invalid_signature",
            )
        )
        cases.append(
            (
                "pubkey of another address",
                signed_post(ta, body, x_requester_pubkey=POOR.public_key.hex()),
                401,
                "address_mismatch",
            )
        )
        for name, shift_s in (("stale timestamp", -61), ("timestamp ahead", 31)):
            stamp = time.time_ns() + shift_s * 10**9
            headers = request_headers(USER, body, TA_ADDRESS, stamp)
            cases.append(
                (name, httpx.post(f"{ta}/v1/chat/completions", content=body, headers=headers), 401, "stale_timestamp")
            )
        poor = bech32.encode(secp256k1.address_bytes(POOR.public_key))
        chain.balances[poor] = 8 * PRICE - 1
        cases.append(("no funds", signed_post(ta, body, key=POOR), 402, "insufficient_funds"))
        cases.append(
            (
                "no funds at the offered fee",
                signed_post(ta, json.dumps({**CHAT, "max_tokens": 4, "fee_per_token": 4}).encode(), key=POOR),
                402,
                "insufficient_funds",
            )
        )
        cases.append(
            ("unknown model", signed_post(ta, json.dumps({**CHAT, "model": "gpt-9"}).encode()), 404, "model_not_found")
        )
        cases.append(("malformed JSON", signed_post(ta, b'{"model": '), 400, None))
        cases.append(("fee below the price", signed_post(ta, body, x_fee_per_token=str(PRICE - 1)), 400, "fee_too_low"))
        for name, response, status, code in cases:
            assert response.status_code == status, (name, response.text)
            assert_error(response, status, code)
        assert chain.starts == []
        with pytest.raises(openai.AuthenticationError) as raised:
            client(ta, clock=lambda: time.time_ns() - 120 * 10**9).chat.completions.create(**CHAT)
        assert raised.value.code == "stale_timestamp"
        with pytest.raises(openai.NotFoundError) as missing:
            client(ta).chat.completions.create(**{**CHAT, "model": "gpt-9"})
        assert missing.value.code == "model_not_found"
        assert chain.starts == []
        # the same signed request twice: the second is a replay
        headers = request_headers(USER, body, TA_ADDRESS)
        first = httpx.post(f"{ta}/v1/chat/completions", content=body, headers=headers)
        again = httpx.post(f"{ta}/v1/chat/completions", content=body, headers=headers)
        assert first.status_code == 200
        assert_error(again, 401, "replayed_request", "authentication_error")
        assert len(chain.starts) == 1


def test_chain_refusals_become_openai_errors() -> None:
    with network(FakeNode("a")) as (ta, chain, _):
        for reason, status in (("insufficient_funds", 402), ("already_exists", 409), ("invalid", 400)):
            chain.refuse = ChainError(reason, "refused by the script")
            assert_error(signed_post(ta, json.dumps(CHAT).encode()), status, reason)
        chain.refuse = None
        assert chain.starts == []
        assert status_of(ta)["nodes"][0]["in_flight"] == 0


# --------------------------------------------------------------------------
# routing


def test_least_loaded_then_heavier_host() -> None:
    slow = FakeNode("b", delay_s=0.3)
    with network(FakeNode("a"), slow, FakeNode("c"), weights=(5, 50, 20)) as (ta, chain, _):
        assert client(ta).chat.completions.create(**CHAT).choices[0].message.content == "b says hi"
        with ThreadPoolExecutor(2) as pool:
            held = pool.submit(client(ta).chat.completions.create, **CHAT)
            wait_until(lambda: status_of(ta)["in_flight"] == 1, "the slow request never started")
            other = client(ta).chat.completions.create(**CHAT)
            assert other.choices[0].message.content == "c says hi"  # b is busy: the next heaviest idle host
            assert held.result().choices[0].message.content == "b says hi"
        assert [s.executor for s in chain.starts] == [OPERATORS[1], OPERATORS[1], OPERATORS[2]]


def test_dead_node_is_retried_elsewhere_and_marked_dead() -> None:
    """Node a, the heavier host, dies between two polls: the TA learns it from the refused connection, marks
    it dead and sends the request to b before any byte reached the client, with the chain told of the new
    executor (a reassignment of the same inference id)."""
    with ExitStack() as stack:
        live_url = stack.enter_context(serve(FakeNode("b")))
        doomed = stack.enter_context(ExitStack())
        dead_url = doomed.enter_context(serve(FakeNode("a")))
        chain = ScriptedChain(
            [MODEL], [node(0, dead_url, weight=100), node(1, live_url, weight=1)], {USER_ADDRESS: 10**9}
        )
        agent = Agent(AgentConfig(key=TA_KEY, chain=chain, poll_interval_s=60))
        ta = stack.enter_context(serve(agent, lifespan="on"))
        assert client(ta).chat.completions.create(**CHAT).choices[0].message.content == "a says hi"
        doomed.close()  # a's server stops; the TA has not polled since
        for stream in (False, True):
            created = client(ta).chat.completions.create(**CHAT, stream=stream)
            text = (
                "".join(c.choices[0].delta.content or "" for c in created)
                if stream
                else created.choices[0].message.content
            )
            assert text == "b says hi"
            info = status_of(ta)["nodes"][0]
            assert info["state"] == "dead" and "connect" in info["last_error"]
            next(s for s in agent.router.nodes.values() if s.node.node_id == "node0").alive = True  # as if polled
        starts = chain.starts[1:]
        assert [(s.executor, s.reassign) for s in starts] == [(OPERATORS[0], False), (OPERATORS[1], True)] * 2
        assert starts[0].inference_id == starts[1].inference_id != starts[2].inference_id == starts[3].inference_id
        metrics = httpx.get(f"{ta}/metrics").text
        assert "gonka_ta_retries_total 2" in metrics
        assert 'gonka_ta_requests_total{code="200"} 3' in metrics


def test_a_stopped_node_is_marked_dead_within_seconds() -> None:
    with ExitStack() as stack:
        live_url = stack.enter_context(serve(FakeNode("b")))
        with serve(FakeNode("a")) as doomed_url:
            chain = ScriptedChain([MODEL], [node(0, doomed_url, weight=100), node(1, live_url)], {USER_ADDRESS: 10**9})
            ta = stack.enter_context(
                serve(
                    Agent(AgentConfig(key=TA_KEY, chain=chain, poll_interval_s=0.2, poll_timeout_s=0.5)), lifespan="on"
                )
            )
            assert [n["state"] for n in status_of(ta)["nodes"]] == ["alive", "alive"]
        stopped = time.monotonic()
        wait_until(lambda: status_of(ta)["nodes"][0]["state"] == "dead", "the stopped node is still alive", 3.0)
        assert time.monotonic() - stopped < 3.0
        assert client(ta).chat.completions.create(**CHAT).choices[0].message.content == "b says hi"
        assert [s.executor for s in chain.starts] == [OPERATORS[1]]


# --------------------------------------------------------------------------
# the queue


def test_higher_fees_finish_first_when_saturated() -> None:
    gate = threading.Event()
    busy = FakeNode("a", max_concurrency=1, hold=gate)
    fees = [3, 9, 2, 7, 5, 4]
    with network(busy) as (ta, chain, _), ThreadPoolExecutor(len(fees) + 1) as pool:
        blocker = pool.submit(client(ta).chat.completions.create, **CHAT)
        wait_until(lambda: status_of(ta)["in_flight"] == 1, "the first request never started")
        waiting = []
        for i, fee in enumerate(fees):
            waiting.append(pool.submit(client(ta).chat.completions.create, **CHAT, extra_body={"fee_per_token": fee}))
            wait_until(lambda: status_of(ta)["queue"] == i + 1, f"request {i} never queued")
        gate.set()
        blocker.result()
        for future in waiting:
            future.result()
        order = [request.get("fee_per_token") for request in busy.served]
        assert order == [None, *sorted(fees, reverse=True)]
        assert [s.fee_per_token for s in chain.starts] == [PRICE, *sorted(fees, reverse=True)]


def test_full_queue_is_429_and_a_leaving_client_leaves_the_queue() -> None:
    gate = threading.Event()
    busy = FakeNode("a", max_concurrency=1, hold=gate)
    with network(busy, queue_bound=1) as (ta, chain, _), ThreadPoolExecutor(2) as pool:
        blocker = pool.submit(client(ta).chat.completions.create, **CHAT)
        wait_until(lambda: status_of(ta)["in_flight"] == 1, "the first request never started")
        # a client that gives up while queued: its place is freed and nothing was started for it
        with pytest.raises(openai.APITimeoutError):
            openai.OpenAI(
                base_url=f"{ta}/v1",
                api_key="x",
                max_retries=0,
                timeout=0.3,
                http_client=httpx.Client(auth=SignedRequests(USER, TA_ADDRESS), timeout=0.3),
            ).chat.completions.create(**CHAT)
        wait_until(lambda: status_of(ta)["queue"] == 0, "the departed client is still queued", 2.0)
        queued = pool.submit(client(ta).chat.completions.create, **CHAT, extra_body={"fee_per_token": 5})
        wait_until(lambda: status_of(ta)["queue"] == 1, "the second request never queued")
        refused = signed_post(ta, json.dumps(CHAT).encode())
        assert_error(refused, 429, "rate_limit_exceeded", "requests")
        assert refused.headers["retry-after"] == "1"
        with pytest.raises(openai.RateLimitError):
            client(ta).chat.completions.create(**CHAT)
        assert len(chain.starts) == 1
        gate.set()
        blocker.result()
        queued.result()
        assert [s.fee_per_token for s in chain.starts] == [PRICE, 5]
        assert len(busy.served) == 2
        metrics = httpx.get(f"{ta}/metrics").text
        assert 'gonka_ta_requests_total{code="429"} 2' in metrics
        assert 'gonka_ta_requests_total{code="499"} 1' in metrics


def test_a_client_leaving_mid_stream_frees_the_node() -> None:
    slow = FakeNode("a", delay_s=0.03, tokens=30)
    with network(slow) as (ta, chain, _):
        body = json.dumps({**CHAT, "stream": True}).encode()
        with httpx.stream(
            "POST", f"{ta}/v1/chat/completions", content=body, headers=request_headers(USER, body, TA_ADDRESS)
        ) as response:
            assert response.status_code == 200 and response.headers["x-inference-id"]
            events = (line for line in response.iter_lines() if line.startswith("data:"))
            next(events)
            next(events)
            assert status_of(ta)["in_flight"] == 1
        wait_until(lambda: status_of(ta)["in_flight"] == 0, "the departed stream still holds its node", 2.0)
        assert status_of(ta)["nodes"][0]["in_flight"] == 0
        assert 'gonka_ta_requests_total{code="499"} 1' in httpx.get(f"{ta}/metrics").text
        assert len(chain.starts) == 1 and response.headers["x-inference-id"] == chain.starts[0].inference_id.hex()


def test_no_live_node_is_503() -> None:
    with serve(FakeNode("a")) as url:
        other = Model("m2", 512, PRICE)
        chain = ScriptedChain([MODEL, other], [node(0, url)], {USER_ADDRESS: 10**9})
        with serve(Agent(AgentConfig(key=TA_KEY, chain=chain)), lifespan="on") as ta:
            assert_error(signed_post(ta, json.dumps({**CHAT, "model": "m2"}).encode()), 503, "no_capable_node")
            assert chain.starts == []


# --------------------------------------------------------------------------
# what the TA publishes


def test_identity_is_signed() -> None:
    with network(FakeNode("a")) as (ta, _, _):
        document = httpx.get(f"{ta}/v1/identity").json()
        assert (document["address"], document["chain_id"], document["latest_height"], document["tas"]) == (
            TA_ADDRESS,
            "gonka-test",
            42,
            ["http://ta-2.example"],
        )
        assert document["pubkey"] == TA_KEY.public_key.hex()
        assert verify_identity(document)
        assert len(base64.b64decode(document["signature"])) == 64
        assert not verify_identity({**document, "latest_height": 43})
        assert not verify_identity({**document, "address": USER_ADDRESS})


def test_status_and_metrics_count() -> None:
    with network(FakeNode("a"), FakeNode("b")) as (ta, _, _):
        for _ in range(3):
            client(ta).chat.completions.create(**CHAT)
        signed_post(ta, b"{")
        httpx.post(f"{ta}/v1/chat/completions", content=b"{}")
        status = status_of(ta)
        assert (status["queue"], status["in_flight"], status["address"]) == (0, 0, TA_ADDRESS)
        assert {n["node_id"]: n["state"] for n in status["nodes"]} == {"node0": "alive", "node1": "alive"}
        metrics = httpx.get(f"{ta}/metrics")
        assert metrics.headers["content-type"].startswith("text/plain")
        text = metrics.text
        for line in (
            'gonka_ta_requests_total{code="200"} 3',
            'gonka_ta_requests_total{code="400"} 1',
            'gonka_ta_requests_total{code="401"} 1',
            "gonka_ta_queue_length 0",
            "gonka_ta_in_flight 0",
            'gonka_ta_request_duration_seconds_bucket{le="+Inf"} 5',
            "gonka_ta_request_duration_seconds_count 5",
            f'gonka_ta_node_in_flight{{operator="{OPERATORS[0]}",node_id="node0"}} 0',
        ):
            assert line in text.splitlines(), line
        assert httpx.get(f"{ta}/v1/nothing").status_code == 404


# --------------------------------------------------------------------------
# a real ML node behind the TA


@contextmanager
def tiny_mlnode(folder: Path) -> Iterator[str]:
    """A real ML node process (tiny preset, seed 1), as ``gonkad mlnode start`` runs it but without the CLI
    around it (which imports the whole app); stopped however the block ends."""
    from test_mlnode_server import ready_url

    code = (
        "from mlnode.settings import NodeSettings; from mlnode import node; "
        "node.run(NodeSettings(port=0, preset='tiny', seed=1, threads=1))"
    )
    log = folder / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr)
        try:
            yield ready_url(process, log)
        finally:
            stop_child(process, grace_s=10)
            assert process.stdout is not None
            process.stdout.close()


def test_real_mlnode_behind_the_ta(tmp_path: Path) -> None:
    with tiny_mlnode(tmp_path) as url:
        tiny = Model("tiny-seed1", context_length=512, price_per_token=1)
        chain = ScriptedChain(
            [tiny], [Node(OPERATORS[0], "n0", url, ("tiny-seed1",), 1 << 30, 8, 1)], {USER_ADDRESS: 10**9}
        )
        with serve(Agent(AgentConfig(key=TA_KEY, chain=chain)), lifespan="on") as ta:
            ask = {
                "model": "tiny-seed1",
                "messages": [{"role": "user", "content": "Hello"}],
                "max_tokens": 12,
                "seed": 5,
                "logprobs": True,
                "top_logprobs": 2,
            }
            through = client(ta).chat.completions.create(**ask)
            direct = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0).chat.completions.create(**ask)
            assert through.choices[0].message.content == direct.choices[0].message.content
            assert through.choices[0].logprobs == direct.choices[0].logprobs
            chunks = list(client(ta).chat.completions.create(**ask, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks) == direct.choices[0].message.content
            assert [s.seed for s in chain.starts] == [5, 5] and chain.starts[0].executor == OPERATORS[0]
