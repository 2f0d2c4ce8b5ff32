"""The ML node's OpenAI-compatible API end to end.

Real ``gonkad mlnode start`` processes on loopback, driven by the official ``openai`` client (httpx where a
request must be malformed), and every answer checked against ``generate.generate`` run in this process on
the same seeded model. A node served in this process covers what needs a hand on the model: a failing
forward pass and a client leaving mid-stream.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import torch
from openai.types.chat import ChatCompletionTokenLogprob
from servers import serve

from mlnode import forgery
from mlnode.generate import GenerationRequest, Sequence, generate
from mlnode.limits import MIN_BODY_BYTES
from mlnode.local import LocalBackend, openai_logprobs
from mlnode.nodeinfo import Hardware
from mlnode.sampling import SamplingParams
from mlnode.server import create_app
from mlnode.settings import NodeSettings
from mlnode.sprint.params import RACE_PRESETS, race_params_hash
from mlnode.tokenizer import chat_prompt, decode, token_from_bytes
from mlnode.upstream import upstream_error
from mlnode.verify import teacher_forced
from mlnode.weights import LoadedModel, random_model
from sdk.client.process import stop_child

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parent.parent
MODEL = "tiny-seed1"
TOKENS_LIMIT = 480
"""The nodes' max_tokens limit: long enough that a held request keeps its slot for a while."""
READY_TIMEOUT_S = 60.0
LOGPROB_TOLERANCE = 1e-4


# --------------------------------------------------------------------------
# processes


def ready_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """The URL from the node's ready line; fails with the node's stderr if it never comes."""
    assert process.stdout is not None
    readable, _, _ = select.select([process.stdout], [], [], READY_TIMEOUT_S)
    line = process.stdout.readline() if readable else b""
    assert line, f"the node did not start:\n{log.read_text()[-3000:]}"
    return str(json.loads(line)["url"])


@contextmanager
def mlnode(folder: Path, *args: str) -> Iterator[str]:
    """A node process on a free loopback port, stopped (killed if need be) however the block ends."""
    log = folder / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "gonkad", "mlnode", "start", "--port", "0", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        try:
            yield ready_url(process, log)
        finally:
            stop_child(process, grace_s=10)
            assert process.stdout is not None
            process.stdout.close()


def openai_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)


@pytest.fixture(scope="module")
def reference() -> LoadedModel:
    return random_model("tiny", 1)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mlnode(
        tmp_path_factory.mktemp("node"),
        "--preset",
        "tiny",
        "--seed",
        "1",
        "--threads",
        "1",
        "--max-tokens-limit",
        str(TOKENS_LIMIT),
        "--race-preset",
        "tiny",
    ) as url:
        yield url


@pytest.fixture(scope="module")
def small_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One batch slot and no queue: a second request is refused while one runs."""
    with mlnode(
        tmp_path_factory.mktemp("small"),
        "--preset",
        "tiny",
        "--seed",
        "1",
        "--threads",
        "1",
        "--max-concurrency",
        "1",
        "--max-queue",
        "0",
        "--max-tokens-limit",
        str(TOKENS_LIMIT),
    ) as url:
        yield url


@pytest.fixture(scope="module")
def upstream_node(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Fronts ``node``, with its own limit of one request at a time."""
    with mlnode(
        tmp_path_factory.mktemp("upstream"), "--upstream", node, "--max-concurrency", "1", "--max-queue", "0"
    ) as url:
        yield url


@pytest.fixture(scope="module")
def client(node: str) -> openai.OpenAI:
    return openai_client(node)


# --------------------------------------------------------------------------
# requests and their expected answers


@dataclass(frozen=True)
class Ask:
    """One chat request, sent through the API or replayed with ``generate`` in this process."""

    text: str
    seed: int
    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    top_logprobs: int = 3

    def params(self) -> dict[str, Any]:
        stop = {"stop": list(self.stop)} if self.stop else {}
        return {
            "model": MODEL,
            "messages": [{"role": "user", "content": self.text}],
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            **stop,
        }

    def expected(self, model: LoadedModel) -> Sequence:
        return generate(
            model.model,
            GenerationRequest(
                chat_prompt([("user", self.text)]),
                self.max_tokens,
                SamplingParams(self.temperature, self.top_p, self.seed),
                tuple(s.encode() for s in self.stop),
                self.top_logprobs,
            ),
        )


@dataclass
class Answer:
    text: str
    logprobs: list[ChatCompletionTokenLogprob]
    finish_reason: str
    seed: int


def complete(client: openai.OpenAI, ask: Ask) -> Answer:
    completion = client.chat.completions.create(**ask.params())
    choice = completion.choices[0]
    assert choice.message.content is not None and choice.logprobs is not None and choice.logprobs.content is not None
    assert completion.model_extra is not None
    return Answer(choice.message.content, choice.logprobs.content, choice.finish_reason, completion.model_extra["seed"])


def stream(client: openai.OpenAI, ask: Ask) -> Answer:
    """The streamed answer reassembled; every chunk names the seed and the last one the usage."""
    chunks = list(client.chat.completions.create(**ask.params(), stream=True, stream_options={"include_usage": True}))
    choices = [chunk.choices[0] for chunk in chunks if chunk.choices]
    logprobs = [t for c in choices if c.logprobs and c.logprobs.content for t in c.logprobs.content]
    finish_reasons = [c.finish_reason for c in choices if c.finish_reason]
    seeds = {(chunk.model_extra or {}).get("seed") for chunk in chunks}
    usage = chunks[-1].usage
    assert choices[0].delta.role == "assistant" and len(finish_reasons) == 1 and len(seeds) == 1
    assert usage is not None and usage.completion_tokens == len(logprobs)
    return Answer("".join(c.delta.content or "" for c in choices), logprobs, finish_reasons[0], seeds.pop())


def token_ids(tokens: list[Any]) -> list[int]:
    return [token_from_bytes(t.bytes or [], t.token) for t in tokens]


def assert_matches(answer: Answer, expected: Sequence) -> None:
    """Same tokens, text and finish as ``generate``; logprobs equal up to batched float rounding."""
    assert token_ids(answer.logprobs) == expected.tokens
    assert answer.text == decode(expected.tokens)
    assert answer.finish_reason == expected.finish_reason
    assert answer.seed == expected.request.sampling.seed
    for got, want in zip(answer.logprobs, expected.logprobs, strict=True):
        assert got.logprob == pytest.approx(want.logprob, abs=LOGPROB_TOLERANCE)
        assert token_ids(got.top_logprobs) == [token for token, _ in want.top]
        assert [t.logprob for t in got.top_logprobs] == pytest.approx([lp for _, lp in want.top], abs=LOGPROB_TOLERANCE)


def assert_identical(a: Answer, b: Answer) -> None:
    assert (a.text, a.finish_reason, a.seed) == (b.text, b.finish_reason, b.seed)
    assert [t.model_dump() for t in a.logprobs] == [t.model_dump() for t in b.logprobs]


def verify_body(ask: Ask, answer: Answer) -> dict[str, Any]:
    """The ``/v1/verify`` request a validator builds from a served answer."""
    params = ask.params()
    return {
        "model": MODEL,
        "messages": params["messages"],
        "max_tokens": ask.max_tokens,
        "temperature": ask.temperature,
        "top_p": ask.top_p,
        "seed": answer.seed,
        "stop": list(ask.stop),
        "finish_reason": answer.finish_reason,
        "logprobs": [t.model_dump() for t in answer.logprobs],
    }


def with_stop(model: LoadedModel, ask: Ask) -> Ask:
    """The same request, stopped by a printable character it would otherwise produce midway."""
    tokens = ask.expected(model).tokens
    return replace(ask, stop=(next(chr(t) for t in tokens[4:] if 33 <= t < 127),))


HOLD = Ask("Hold the slot", seed=0, max_tokens=TOKENS_LIMIT, temperature=0.0)
"""Greedy on tiny-seed1, this answer never meets EOT: it holds its slot for all its steps."""


@contextmanager
def held_stream(url: str) -> Iterator[None]:
    """``HOLD`` streaming and past its first token; leaving the block disconnects it."""
    with httpx.stream("POST", f"{url}/v1/chat/completions", json={**HOLD.params(), "stream": True}) as response:
        assert response.status_code == 200
        lines = (line for line in response.iter_lines() if line.startswith("data:"))
        next(lines)
        next(lines)
        assert httpx.get(f"{url}/v1/node/info").json()["load"]["in_flight"] == 1
        yield


def wait_until(condition: Callable[[], bool], failure: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.02)


def wait_idle(url: str) -> None:
    wait_until(
        lambda: httpx.get(f"{url}/v1/node/info").json()["load"]["in_flight"] == 0,
        f"{url} still has a request in flight",
    )


def assert_error(
    response: httpx.Response,
    status: int,
    param: str | None = None,
    code: str | None = None,
    kind: str = "invalid_request_error",
) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    assert (error["type"], error["param"], error["code"]) == (kind, param, code)


# --------------------------------------------------------------------------
# answers


def test_completion_matches_generate(client: openai.OpenAI, reference: LoadedModel) -> None:
    ask = Ask("Hello there", seed=5)
    completion = client.chat.completions.create(**ask.params())
    assert completion.object == "chat.completion" and completion.id.startswith("chatcmpl-")
    assert completion.model == MODEL and completion.system_fingerprint == f"fp_{reference.sha256[:12]}"
    prompt_tokens = len(chat_prompt([("user", ask.text)]))
    assert completion.usage is not None and completion.usage.prompt_tokens == prompt_tokens
    assert completion.usage.total_tokens == prompt_tokens + completion.usage.completion_tokens
    assert completion.choices[0].message.role == "assistant"
    assert_matches(complete(client, ask), ask.expected(reference))


def test_stream_equals_non_stream(client: openai.OpenAI, reference: LoadedModel) -> None:
    ask = Ask("Stream me a story", seed=11, max_tokens=24, top_logprobs=5)
    streamed = stream(client, ask)
    assert_identical(streamed, complete(client, ask))
    assert_matches(streamed, ask.expected(reference))


def test_same_seed_same_answer(client: openai.OpenAI) -> None:
    ask = Ask("Twice", seed=123, max_tokens=20)
    assert_identical(complete(client, ask), complete(client, ask))
    unseeded = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Any seed"}], max_tokens=12
    )
    assert unseeded.model_extra is not None and isinstance(unseeded.model_extra["seed"], int)
    replay = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Any seed"}],
        max_tokens=12,
        seed=unseeded.model_extra["seed"],
    )
    assert replay.choices[0].message.content == unseeded.choices[0].message.content


def test_concurrent_requests_match_generate(client: openai.OpenAI, reference: LoadedModel) -> None:
    asks = [
        Ask("first", seed=1, max_tokens=8),
        Ask("second, greedy", seed=2, max_tokens=30, temperature=0.0),
        Ask("third", seed=3, max_tokens=20, top_p=0.9, top_logprobs=0),
        with_stop(reference, Ask("fourth, stopped", seed=4, max_tokens=24)),
        Ask("fifth", seed=5, max_tokens=12, temperature=0.7, top_logprobs=5),
        Ask("sixth", seed=6, max_tokens=26, temperature=1.3),
        with_stop(reference, Ask("seventh, stopped", seed=7, max_tokens=30, temperature=0.8)),
        Ask("eighth", seed=8, max_tokens=4),
    ]
    expected = [ask.expected(reference) for ask in asks]
    assert [e.finish_reason for e in expected].count("stop") >= 2
    calls: list[Callable[[openai.OpenAI, Ask], Answer]] = [complete, stream] * 4
    with ThreadPoolExecutor(len(asks)) as pool:
        answers = list(pool.map(lambda i: calls[i](client, asks[i]), range(len(asks))))
    for answer, want in zip(answers, expected, strict=True):
        assert_matches(answer, want)


# --------------------------------------------------------------------------
# errors

TOO_LONG = "x" * 600
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
VERIFY = {**CHAT, "max_tokens": 2, "seed": 1, "finish_reason": "length", "logprobs": []}
"""A well-formed verify request (its empty answer fails the check, with 200)."""
ENTRY = {"token": "a", "logprob": -5.0, "bytes": [97]}
BAD_REQUESTS: list[tuple[str, str, str, Any, int, str | None, str | None]] = [
    ("malformed json", "POST", "/v1/chat/completions", b'{"model": ', 400, None, None),
    ("body not an object", "POST", "/v1/chat/completions", [], 400, None, None),
    ("missing model", "POST", "/v1/chat/completions", {"messages": CHAT["messages"]}, 400, "model", None),
    ("missing messages", "POST", "/v1/chat/completions", {"model": MODEL}, 400, "messages", None),
    ("messages not a list", "POST", "/v1/chat/completions", {**CHAT, "messages": "hi"}, 400, "messages", None),
    (
        "unknown role",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "bot", "content": "x"}]},
        400,
        "messages[0].role",
        None,
    ),
    ("max_tokens not a number", "POST", "/v1/chat/completions", {**CHAT, "max_tokens": "ten"}, 400, "max_tokens", None),
    ("temperature above 2", "POST", "/v1/chat/completions", {**CHAT, "temperature": 2.5}, 400, "temperature", None),
    ("unknown model", "POST", "/v1/chat/completions", {**CHAT, "model": "gpt-9"}, 404, "model", "model_not_found"),
    (
        "max_tokens above the limit",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "max_tokens": TOKENS_LIMIT + 1},
        400,
        "max_tokens",
        "integer_above_max_value",
    ),
    (
        "max_completion_tokens above the limit",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "max_completion_tokens": TOKENS_LIMIT + 1},
        400,
        "max_completion_tokens",
        "integer_above_max_value",
    ),
    (
        "longer than the context",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "user", "content": TOO_LONG}], "max_tokens": 10},
        400,
        "messages",
        "context_length_exceeded",
    ),
    (
        "prompt fills the context",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "user", "content": TOO_LONG}]},
        400,
        "messages",
        "context_length_exceeded",
    ),
    (
        "top_logprobs above 5",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "logprobs": True, "top_logprobs": 6},
        400,
        "top_logprobs",
        None,
    ),
    (
        "top_logprobs without logprobs",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "top_logprobs": 2},
        400,
        "top_logprobs",
        None,
    ),
    ("n above 1", "POST", "/v1/chat/completions", {**CHAT, "n": 2}, 400, "n", None),
    ("five stop sequences", "POST", "/v1/chat/completions", {**CHAT, "stop": list("abcde")}, 400, "stop", None),
    (
        "more messages than OpenAI takes",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "user", "content": ""}] * 2049},
        400,
        "messages",
        None,
    ),
    # lone surrogates: valid JSON escapes, but no UTF-8 form (regression: 500 from UnicodeEncodeError)
    (
        "lone surrogate in content",
        "POST",
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "user", "content": "hi \ud800"}]},
        400,
        "messages[0].content",
        None,
    ),
    ("lone surrogate in model", "POST", "/v1/chat/completions", {**CHAT, "model": "tiny\udfff"}, 400, "model", None),
    ("lone surrogate in stop", "POST", "/v1/chat/completions", {**CHAT, "stop": "\udbff"}, 400, "stop[0]", None),
    (
        "verify: lone surrogate in content",
        "POST",
        "/v1/verify",
        {**VERIFY, "messages": [{"role": "user", "content": "\ud800"}]},
        400,
        "messages[0].content",
        None,
    ),
    (
        "verify: lone surrogate in a token",
        "POST",
        "/v1/verify",
        {**VERIFY, "logprobs": [{**ENTRY, "token": "\ud800", "top_logprobs": []}]},
        400,
        "logprobs[0].token",
        None,
    ),
    (
        "verify: lone surrogate in finish_reason",
        "POST",
        "/v1/verify",
        {**VERIFY, "finish_reason": "\ud800"},
        400,
        "finish_reason",
        None,
    ),
    ("verify: unknown field named by a lone surrogate", "POST", "/v1/verify", {**VERIFY, "\ud800": 1}, 400, None, None),
    # verify bounded as chat is (regression: 300 top_logprobs gave 500 "selected index k out of range")
    (
        "verify: 300 top_logprobs",
        "POST",
        "/v1/verify",
        {**VERIFY, "logprobs": [{**ENTRY, "top_logprobs": [ENTRY] * 300}]},
        400,
        "logprobs[0].top_logprobs",
        None,
    ),
    (
        "verify: top_logprobs above 5",
        "POST",
        "/v1/verify",
        {**VERIFY, "logprobs": [{**ENTRY, "top_logprobs": [ENTRY] * 6}]},
        400,
        "logprobs[0].top_logprobs",
        None,
    ),
    (
        "verify: answer beyond the context",
        "POST",
        "/v1/verify",
        {**VERIFY, "logprobs": [{**ENTRY, "top_logprobs": []}] * 600},
        400,
        "messages",
        "context_length_exceeded",
    ),
    (
        "verify: max_tokens beyond the context",
        "POST",
        "/v1/verify",
        {**VERIFY, "max_tokens": 600},
        400,
        "messages",
        "context_length_exceeded",
    ),
    # verify takes only sampling a generator takes (regression: any temperature was replayed)
    ("verify: temperature above 2", "POST", "/v1/verify", {**VERIFY, "temperature": 1e16}, 400, "temperature", None),
    ("verify: top_p 0", "POST", "/v1/verify", {**VERIFY, "top_p": 0}, 400, "top_p", None),
    ("verify: no seed", "POST", "/v1/verify", {k: v for k, v in VERIFY.items() if k != "seed"}, 400, "seed", None),
    ("verify: threshold above 1", "POST", "/v1/verify", {**VERIFY, "threshold": 1.5}, 400, "threshold", None),
    ("verify: negative threshold", "POST", "/v1/verify", {**VERIFY, "threshold": -0.1}, 400, "threshold", None),
    ("verify: threshold not a number", "POST", "/v1/verify", {**VERIFY, "threshold": "high"}, 400, "threshold", None),
    ("unknown route", "GET", "/v1/engines", None, 404, None, None),
    ("wrong method", "GET", "/v1/chat/completions", None, 405, None, None),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "param", "code"),
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
def test_bad_request_gets_openai_error_and_node_serves_on(
    node: str, method: str, path: str, body: Any, status: int, param: str | None, code: str | None
) -> None:
    content = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    response = httpx.request(method, f"{node}{path}", content=content, headers={"content-type": "application/json"})
    assert_error(response, status, param, code)
    assert httpx.post(f"{node}/v1/chat/completions", json={**CHAT, "max_tokens": 2}).status_code == 200


def test_openai_client_raises_the_error_body(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.code == "model_not_found" and raised.value.param == "model"


def test_tiny_temperature_is_greedy(client: openai.OpenAI, node: str, reference: LoadedModel) -> None:
    """Regression: temperature 1e-320, allowed by the schema, overflowed logits / T and gave 500. Below
    1e-5 it is argmax, and the verifier replays it so."""
    ask = Ask("Almost zero", seed=3, temperature=1e-320)
    answer = complete(client, ask)
    assert_matches(answer, replace(ask, temperature=0.0).expected(reference))
    verdict = httpx.post(f"{node}/v1/verify", json=verify_body(ask, answer), timeout=30).json()
    assert verdict["match"] is True and verdict["score"] > 0.999


def test_made_up_answer_is_refused_at_any_temperature(node: str, reference: LoadedModel) -> None:
    """Regression: made-up tokens sent with their true logprobs and a claimed temperature of 1e16 matched
    (score 1.0, token agreement 0.0). That temperature is refused as in chat; at 2.0, the highest one a
    generator takes, the same answer does not match."""
    tokens = list(b"made up, not sampled")
    prompt = chat_prompt([("user", "hi")])
    claims = forgery.reported(teacher_forced(reference.model, prompt, tokens), tokens, 5)
    content = openai_logprobs(claims).content
    assert content is not None
    forged = {**VERIFY, "max_tokens": len(tokens), "top_p": 1.0, "logprobs": [t.model_dump() for t in content]}
    assert_error(httpx.post(f"{node}/v1/verify", json={**forged, "temperature": 1e16}, timeout=30), 400, "temperature")
    verdict = httpx.post(f"{node}/v1/verify", json={**forged, "temperature": 2.0}, timeout=30).json()
    assert verdict["match"] is False and "token_mismatch" in verdict["reasons"]
    assert verdict["max_logprob_error"] < 1e-5
    assert httpx.post(f"{node}/v1/chat/completions", json={**CHAT, "max_tokens": 2}).status_code == 200


def chat_of_size(size: int) -> bytes:
    """A chat request body of exactly ``size`` bytes."""
    empty = json.dumps({**CHAT, "messages": [{"role": "user", "content": ""}]}).encode()
    return json.dumps({**CHAT, "messages": [{"role": "user", "content": "x" * (size - len(empty))}]}).encode()


def post_body(url: str, body: bytes, chunked: bool) -> httpx.Response:
    """POST ``body`` with its Content-Length, or chunked with none."""
    content = (body[i : i + 65536] for i in range(0, len(body), 65536)) if chunked else body
    return httpx.post(url, content=content, headers={"content-type": "application/json"}, timeout=30)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_body_over_the_limit_is_413_before_it_is_parsed(node: str, chunked: bool) -> None:
    """Regression: a 60 MB chat body took the node from 608 MB to 1.2 GB of memory before its 400. A body
    over the limit (1 MiB for the tiny preset's 512 tokens) is refused unparsed, several at once, on both
    JSON routes; one of exactly the limit is parsed (and refused for its prompt)."""
    over = chat_of_size(MIN_BODY_BYTES + 1)
    urls = [f"{node}/v1/chat/completions", f"{node}/v1/verify"] * 3
    with ThreadPoolExecutor(len(urls)) as pool:
        responses = list(pool.map(lambda url: post_body(url, over, chunked), urls))
    for response in responses:
        assert_error(response, 413, code="request_too_large")
    at_limit = post_body(f"{node}/v1/chat/completions", chat_of_size(MIN_BODY_BYTES), chunked)
    assert_error(at_limit, 400, "messages", "context_length_exceeded")
    assert httpx.post(f"{node}/v1/chat/completions", json={**CHAT, "max_tokens": 2}).status_code == 200


def test_over_capacity_is_429_and_a_disconnect_frees_the_slot(small_node: str) -> None:
    request = {**CHAT, "max_tokens": 2}
    with held_stream(small_node):
        refused = httpx.post(f"{small_node}/v1/chat/completions", json=request)
        assert_error(refused, 429, code="rate_limit_exceeded", kind="requests")
        assert refused.headers["retry-after"] == "1"
        with pytest.raises(openai.RateLimitError):
            openai_client(small_node).chat.completions.create(**request)
        load = httpx.get(f"{small_node}/v1/node/info").json()["load"]
        assert (load["in_flight"], load["queued"], load["max_concurrency"], load["max_queue"]) == (1, 0, 1, 0)
    wait_idle(small_node)
    assert httpx.post(f"{small_node}/v1/chat/completions", json=request).status_code == 200


# --------------------------------------------------------------------------
# what the node publishes


def test_node_info_and_models(node: str, client: openai.OpenAI, reference: LoadedModel) -> None:
    assert httpx.get(f"{node}/health").json() == {"status": "ok"}
    wait_idle(node)
    models = client.models.list().data
    assert [m.id for m in models] == [MODEL] and models[0].object == "model"
    assert models[0].model_extra is not None and models[0].model_extra["identity"] == reference.identity
    info = httpx.get(f"{node}/v1/node/info").json()
    assert info["models"] == [m.to_dict() for m in models]
    card = info["models"][0]
    assert (card["max_model_len"], card["parameters"]) == (512, reference.config.parameter_count())
    assert info["device"] == "cpu" and info["threads"] >= 1 and info["memory_bandwidth_gbps"] > 0
    memory = info["memory"]
    assert memory["kind"] == "ram" and 0 < memory["available_bytes"] <= memory["total_bytes"]
    assert info["load"] == {"in_flight": 0, "queued": 0, "max_concurrency": 8, "max_queue": 32}


# --------------------------------------------------------------------------
# the upstream adapter


def test_upstream_relays_answers_unchanged(client: openai.OpenAI, upstream_node: str, reference: LoadedModel) -> None:
    relayed = openai_client(upstream_node)
    assert [m.model_dump() for m in relayed.models.list().data] == [m.model_dump() for m in client.models.list().data]
    ask = Ask("Through the adapter", seed=9, max_tokens=20, top_logprobs=4)
    direct = complete(client, ask)
    assert_identical(complete(relayed, ask), direct)
    assert_identical(stream(relayed, ask), direct)
    assert_matches(direct, ask.expected(reference))


def test_upstream_errors_and_capacity(node: str, upstream_node: str) -> None:
    unknown = {**CHAT, "model": "gpt-9"}
    relayed = httpx.post(f"{upstream_node}/v1/chat/completions", json=unknown)
    assert_error(relayed, 404, "model", "model_not_found")
    assert relayed.json() == httpx.post(f"{node}/v1/chat/completions", json=unknown).json()
    assert_error(httpx.post(f"{upstream_node}/v1/chat/completions", json={**CHAT, "n": 3}), 400, "n")
    request = {**CHAT, "max_tokens": 2}
    with held_stream(upstream_node):
        refused = httpx.post(f"{upstream_node}/v1/chat/completions", json=request)
        assert_error(refused, 429, code="rate_limit_exceeded", kind="requests")
        assert refused.headers["retry-after"] == "1"
    wait_idle(upstream_node)
    wait_idle(node)
    assert httpx.post(f"{upstream_node}/v1/chat/completions", json=request).status_code == 200


VLLM_ERROR = {"message": "too long", "type": "BadRequestError", "param": None, "code": 400}


@pytest.mark.parametrize(
    ("status", "payload", "text", "expected"),
    [
        (404, {"error": {**VLLM_ERROR, "code": "model_not_found"}}, "", {**VLLM_ERROR, "code": "model_not_found"}),
        (400, {"object": "error", **VLLM_ERROR}, "", VLLM_ERROR),
        (
            400,
            {"error": {**VLLM_ERROR, "message": "bad \udc80 byte"}},
            "",
            {**VLLM_ERROR, "message": "bad \ufffd byte"},
        ),
        (
            502,
            None,
            "<html>bad gateway</html>",
            {
                "message": "The upstream answered HTTP 502: <html>bad gateway</html>",
                "type": "server_error",
                "param": None,
                "code": None,
            },
        ),
    ],
)
def test_upstream_error_shapes(status: int, payload: Any, text: str, expected: dict[str, Any]) -> None:
    """OpenAI's form, vLLM's older flat form, and a page that is not JSON all become OpenAI's error body,
    one that always encodes (a lone surrogate becomes U+FFFD)."""
    error = upstream_error(status, payload, text)
    assert (error.status, error.body.model_dump()) == (status, {"error": expected})


def test_node_verifies_an_answer_it_served(node: str, client: openai.OpenAI, upstream_node: str) -> None:
    """An answer taken from the API, sent back to ``/v1/verify`` as a validator would: it matches, and a
    forged logprob, another model name or an unreadable token are refused."""
    ask = Ask("Check me", seed=21, max_tokens=20, top_logprobs=5)
    body = verify_body(ask, complete(client, ask))
    verdict = httpx.post(f"{node}/v1/verify", json=body, timeout=30).json()
    assert verdict["match"] is True and verdict["score"] > 0.999 and verdict["model"].startswith(MODEL + "@sha256:")
    assert verdict["threshold"] == 0.8
    strict = httpx.post(f"{node}/v1/verify", json={**body, "threshold": 1.0}, timeout=30).json()
    assert strict["match"] is False and strict["threshold"] == 1.0 and strict["reasons"] == ["low_score"]
    forged = json.loads(json.dumps(body))
    for entry in forged["logprobs"][3:18]:
        entry["logprob"] += 0.5
    forged_verdict = httpx.post(f"{node}/v1/verify", json=forged, timeout=30).json()
    assert forged_verdict["match"] is False and "logprob_mismatch" in forged_verdict["reasons"]
    assert_error(
        httpx.post(f"{node}/v1/verify", json={**body, "model": "tiny-seed2"}, timeout=30),
        404,
        param="model",
        code="model_not_found",
    )
    unreadable = json.loads(json.dumps(body))
    unreadable["logprobs"][0].update(token="xy", bytes=[1, 2])
    assert_error(httpx.post(f"{node}/v1/verify", json=unreadable, timeout=30), 400)
    assert_error(httpx.post(f"{upstream_node}/v1/verify", json=body, timeout=30), 404)


def test_node_runs_the_sprint_race(node: str) -> None:
    """The node started with ``--race-preset tiny`` races, opens and verifies the tiny race."""
    described = httpx.get(f"{node}/v1/sprint/params", timeout=30).json()
    assert described["preset"] == "tiny" and described["params_hash"] == race_params_hash(RACE_PRESETS["tiny"]).hex()
    body = {"seed": "ab" * 32, "pubkey": "02" + "11" * 32, "nonce_start": 0, "nonce_count": 1024}
    run = httpx.post(f"{node}/v1/sprint/run", json=body, timeout=60)
    assert run.status_code == 200, run.text
    assert run.json()["commitment"]["count"] == len(run.json()["proofs"]) > 0
    challenge = {"commitment": run.json()["commitment"], "randomness": "cd" * 32}
    opened = httpx.post(f"{node}/v1/sprint/open", json={**challenge, "proofs": run.json()["proofs"]}, timeout=30)
    verdict = httpx.post(f"{node}/v1/sprint/verify", json={**challenge, **opened.json()}, timeout=30).json()
    assert verdict["failures"] == 0 and not verdict["fraud"]
    assert_error(
        httpx.post(f"{node}/v1/sprint/run", json={**body, "nonce_count": -1}, timeout=30), 400, param="nonce_count"
    )


def gonkad_mlnode_start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gonkad", "mlnode", "start", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_race_preset_flag() -> None:
    """``--race-preset`` is on ``gonkad mlnode start``; an unknown name fails in one line, before torch loads."""
    assert "--race-preset" in gonkad_mlnode_start("--help").stdout
    assert NodeSettings(port=0, preset="tiny").race_preset == "default"
    failed = gonkad_mlnode_start("--port", "0", "--preset", "tiny", "--race-preset", "huge")
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert failed.stderr.strip() == "Error: --race-preset: unknown race preset 'huge'; choose one of default, tiny"


# --------------------------------------------------------------------------
# in this process: a node whose model can be made to fail or to slow down


@pytest.fixture(scope="module")
def local() -> Iterator[tuple[str, LocalBackend]]:
    backend = LocalBackend(random_model("tiny", 1), max_concurrency=2, max_queue=0, max_tokens_limit=TOKENS_LIMIT)
    app = create_app(backend, Hardware(device="cpu", threads=torch.get_num_threads(), memory_bandwidth_gbps=1.0))
    with serve(app, lifespan="on") as url:  # the app starts and stops its backend with the server
        yield url, backend


def fail_once(method: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """The model method, except that its first call raises."""
    failed = threading.Event()

    def wrapper(*args: Any) -> torch.Tensor:
        if not failed.is_set():
            failed.set()
            raise RuntimeError("injected fault")
        return method(*args)

    return wrapper


@pytest.mark.parametrize("step", ["prefill", "decode"])
@pytest.mark.parametrize("streaming", [False, True])
def test_model_failure_fails_the_request_and_the_node_goes_on(
    local: tuple[str, LocalBackend], reference: LoadedModel, monkeypatch: pytest.MonkeyPatch, step: str, streaming: bool
) -> None:
    url, backend = local
    model = backend.loaded.model
    monkeypatch.setattr(model, step, fail_once(getattr(model, step)))
    ask = Ask(f"fault in {step}", seed=3)
    if streaming:
        with pytest.raises(openai.APIError, match="Generation failed"):
            stream(openai_client(url), ask)
    else:
        response = httpx.post(f"{url}/v1/chat/completions", json=ask.params())
        assert_error(response, 500, kind="server_error")
    assert_matches(complete(openai_client(url), ask), ask.expected(reference))
    wait_until(lambda: backend.load().in_flight == 0, "a failed request still holds its slot")


def test_client_leaving_mid_stream_frees_its_slot(
    local: tuple[str, LocalBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, backend = local
    model = backend.loaded.model
    fast_decode = model.decode
    steps: list[int] = []

    def slow_decode(*args: Any) -> torch.Tensor:
        """10 ms a step: the whole answer would hold the slot for seconds."""
        steps.append(1)
        time.sleep(0.01)
        return fast_decode(*args)

    monkeypatch.setattr(model, "decode", slow_decode)
    with held_stream(url):
        pass
    wait_until(lambda: backend.load().in_flight == 0, "the abandoned request still holds its slot")
    assert len(steps) < HOLD.max_tokens // 4
