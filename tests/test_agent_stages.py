"""The TA's request path stage by stage (agent/request.py, agent/pipeline.py, agent/admission.py,
agent/forward.py): each stage gives its result or its refusal as a value, with the status and code the client
gets, and raises none. No servers: an ``Agent`` over a scripted chain whose nodes are never reached."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from types import SimpleNamespace
from typing import Any

import pytest
from agent_fakes import ScriptedChain

from agent.auth import default_seed
from agent.chain import ChainError, Model, Node
from agent.config import AgentConfig
from agent.forward import is_unpaid, release_of
from agent.request import GONE, Attempts, ChatRequest, Price, Retry
from agent.server import Agent
from sdk.client.rpc import RPCError
from sdk.client.signing import request_headers
from sdk.crypto import bech32, secp256k1
from sdk.http.errors import ApiError
from sdk.http.signed import without_seed

MODEL = Model("m1", context_length=512, price_per_token=2)
USER = secp256k1.PrivateKey(hashlib.sha256(b"user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
TA_KEY = secp256k1.PrivateKey(hashlib.sha256(b"ta").digest())
TA_ADDRESS = bech32.encode(secp256k1.address_bytes(TA_KEY.public_key))
OPERATOR = bech32.encode(hashlib.sha256(b"host").digest()[:20])


def body_of(**fields: Any) -> bytes:
    return json.dumps({"model": "m1", "messages": [{"role": "user", "content": "hi"}], **fields}).encode()


def signed(body: bytes, **extra: str) -> dict[bytes, bytes]:
    headers = {**request_headers(USER, body, TA_ADDRESS), **extra}
    return {name.lower().encode(): value.encode() for name, value in headers.items()}


def agent_on(chain: ScriptedChain | None = None, **config: Any) -> Agent:
    """An Agent whose router knows the chain's registry (one node, one slot), never started."""
    node = Node(OPERATOR, "node0", "http://127.0.0.1:9", ("m1",), 1 << 30, 1, 10)
    chain = chain or ScriptedChain([MODEL], [node], {USER_ADDRESS: 10**9})
    agent = Agent(AgentConfig(key=TA_KEY, chain=chain, **config))
    asyncio.run(agent.refresh())
    return agent


def request_of(body: bytes, **extra: str) -> ChatRequest:
    agent = agent_on()
    headers = signed(body, **extra)
    request = ChatRequest.parse(agent.auth.check(headers, body, time.time_ns()), headers, body)
    assert isinstance(request, ChatRequest)
    return request


def refused(value: object, status: int, code: str | None) -> ApiError:
    assert isinstance(value, ApiError), value
    assert (value.status, value.code) == (status, code), value.body()
    return value


async def never() -> dict[str, Any]:
    """A client that stays."""
    await asyncio.sleep(3600)
    return {"type": "http.disconnect"}


async def no_answer(message: dict[str, Any]) -> None:
    raise AssertionError(f"a refused request sends nothing: {message}")


# ------------------------------------------------------------------ parse and price: pure values


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", body_of(stream="yes"), body_of(seed=-1)])
def test_invalid_body_is_a_400_value(body: bytes) -> None:
    request = ChatRequest.parse(request_of(body_of()).requester, {}, body)
    refused(request, 400, None)


def test_a_request_without_a_seed_gets_the_tas_spliced_in() -> None:
    body = body_of(max_tokens=4)
    request = request_of(body)
    seed = default_seed(request.requester.inference_id)
    assert (request.seed, request.chosen_seed) == (seed, seed)
    assert json.loads(request.body)["seed"] == seed and without_seed(request.body, str(seed)) == body
    named = request_of(body_of(seed=7))
    assert (named.seed, named.chosen_seed, named.body) == (7, None, body_of(seed=7))


def test_price_is_the_escrow_the_start_binds() -> None:
    request = request_of(body_of(max_tokens=10))
    price = Price.of(request, {"m1": MODEL}, 256)
    assert isinstance(price, Price)
    assert (price.model, price.max_tokens, price.fee, price.escrow) == ("m1", 10, 2, 20)
    assert price.params_hash == request.terms.params_hash(10, request.seed)
    default = Price.of(request_of(body_of(), **{"X-Fee-Per-Token": "5"}), {"m1": MODEL}, 256)
    assert isinstance(default, Price) and (default.max_tokens, default.fee) == (256, 5)
    body_fee = Price.of(request_of(body_of(fee_per_token=3), **{"X-Fee-Per-Token": "9"}), {"m1": MODEL}, 256)
    assert isinstance(body_fee, Price) and body_fee.fee == 3


@pytest.mark.parametrize(
    ("fields", "headers", "status", "code", "param"),
    [
        ({"model": "m2"}, {}, 404, "model_not_found", "model"),
        ({"max_tokens": 513}, {}, 400, "context_length_exceeded", "max_tokens"),
        ({"max_completion_tokens": 513}, {}, 400, "context_length_exceeded", "max_completion_tokens"),
        ({}, {"X-Fee-Per-Token": "x"}, 400, None, "fee_per_token"),
        ({}, {"X-Fee-Per-Token": "0"}, 400, None, "fee_per_token"),
        ({"fee_per_token": 1}, {}, 400, "fee_too_low", "fee_per_token"),
    ],
)
def test_invalid_price_is_a_value(
    fields: dict[str, Any], headers: dict[str, str], status: int, code: str | None, param: str
) -> None:
    error = refused(Price.of(request_of(body_of(**fields), **headers), {"m1": MODEL}, 256), status, code)
    assert error.param == param


# ------------------------------------------------------------------ the stages that reach the chain or a node


def test_invalid_signature_is_a_401_value() -> None:
    refused(agent_on().pipeline.authenticate({}, body_of()), 401, "missing_signature")


def test_funds_short_of_the_escrow_are_a_402_value() -> None:
    agent = agent_on()
    request = request_of(body_of(max_tokens=10))
    price = Price.of(request, agent.router.models, 256)
    assert isinstance(price, Price)
    assert asyncio.run(agent.pipeline.check_funds(request, price)) is None
    agent.chain.balances[USER_ADDRESS] = 19
    error = refused(asyncio.run(agent.pipeline.check_funds(request, price)), 402, "insufficient_funds")
    assert error.type == "insufficient_funds" and "19ngonka" in error.message


def test_a_chain_node_that_does_not_answer_is_a_503_value() -> None:
    agent = agent_on(chain_retry_s=0)

    def down(*args: Any) -> int:
        raise RPCError("connection refused")

    refused(asyncio.run(agent.pipeline.chain_retrying(down, USER_ADDRESS)), 503, "chain_unavailable")


def test_admission_refusals_are_values() -> None:
    agent = agent_on(queue_bound=0)

    async def admit() -> list[object]:
        first = await agent.pipeline.admission.acquire("m1", 2, frozenset(), never)
        full = await agent.pipeline.admission.acquire("m1", 2, frozenset(), never)
        none = await agent.pipeline.admission.acquire("m2", 2, frozenset(), never)
        return [first, full, none]

    first, full, none = asyncio.run(admit())
    assert first is agent.router.nodes[(OPERATOR, "node0")] and first.local == 1
    assert refused(full, 429, "rate_limit_exceeded").headers == {"retry-after": "1"}
    refused(none, 503, "no_capable_node")


def test_a_client_that_leaves_the_queue_is_gone() -> None:
    agent = agent_on(queue_bound=4)

    async def leave() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def admit() -> object:
        await agent.pipeline.admission.acquire("m1", 2, frozenset(), never)
        return await agent.pipeline.admission.acquire("m1", 2, frozenset(), leave)

    assert asyncio.run(admit()) == GONE and len(agent.queue) == 0


@pytest.mark.parametrize(("reason", "status"), [("insufficient_funds", 402), ("already_exists", 409), ("invalid", 400)])
def test_a_start_the_chain_refuses_is_a_value(reason: str, status: int) -> None:
    agent = agent_on()
    agent.chain.refuse = ChainError(reason, "no")
    body = body_of(max_tokens=4)
    headers = signed(body)
    for _ in range(2):  # refused before the chain started it, its id is free: the same request again is no replay
        refused(asyncio.run(agent.pipeline.serve(headers, body, never, no_answer)), status, reason)
        assert agent.router.nodes[(OPERATOR, "node0")].local == 0 and agent.pipeline.in_flight == 0


def test_a_refusal_before_the_start_frees_the_id() -> None:
    agent = agent_on()
    body = body_of(model="m2")
    headers = signed(body)
    for _ in range(2):  # the same signed request again is refused for its model, not as a replay
        refused(asyncio.run(agent.pipeline.serve(headers, body, never, no_answer)), 404, "model_not_found")


def test_a_failed_node_counts_until_max_attempts() -> None:
    agent = agent_on(max_attempts=2)
    attempts = Attempts()
    assert agent.pipeline.failed(attempts, SimpleNamespace(key=("a", "n0")), Retry(b"release")) is None
    assert (attempts.tried, attempts.release, agent.metrics.retries) == ({("a", "n0")}, b"release", 1)
    refused(agent.pipeline.failed(attempts, SimpleNamespace(key=("b", "n1")), Retry()), 502, "upstream_failed")
    assert (attempts.release, agent.metrics.retries) == (b"", 1)


def test_what_a_host_answers_short_of_an_answer() -> None:
    unpaid = json.dumps({"error": {"code": "unpaid"}}).encode()
    assert is_unpaid(SimpleNamespace(status=402), unpaid)
    assert not is_unpaid(SimpleNamespace(status=402), json.dumps({"error": {"code": "terms_mismatch"}}).encode())
    assert not is_unpaid(SimpleNamespace(status=402), b"[]") and not is_unpaid(SimpleNamespace(status=200), unpaid)
    release = bytes(range(97))
    assert release_of(SimpleNamespace(headers={"x-release": release.hex()})) == release
    assert release_of(SimpleNamespace(headers={"x-release": "zz"})) == b""
    assert release_of(SimpleNamespace(headers={"x-release": release[:96].hex()})) == b""
    assert release_of(SimpleNamespace(headers={})) == b""
