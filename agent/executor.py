"""The executor proxy: the host's side of an inference, a bare ASGI app in front of one ML node
(``agent/README.md``, "Executor proxy", is its spec).

    GET  /health, /v1/models, /v1/node/info   passed through to the ML node
    POST /v1/chat/completions                 a request a TA forwarded: checked (``agent.auth.check_forwarded``),
                                              parsed as the TA parses it (``agent.terms``), admitted only if the
                                              chain will pay for it (the start the TA sent along,
                                              ``x.inference.client.StartAdmission``; 402 otherwise) on the terms
                                              its body asks (``node_body``), sent to the ML node, its answer relayed
                                              once the start is committed, and the finish derived from the answer
                                              handed to the finisher (``x.inference.client.Finisher``)
    GET  /v1/executor/status                  the finisher's counts and last outcomes

A host serves an answer only when the chain is certain to pay for it: the node may start on a request once the
quick checks pass (``admit``), but nothing of its answer leaves the host before the start (or reassignment) is in
a committed block with this host as executor (``confirm``), and the same inference id is answered once
(``one_answer``; a second request for it gets the first's kept answer). The cost is the wait for that block
(bench/RESULTS.md).

The URL a host registers on chain for its node (``gonkad tx inference register-node … URL``) is this proxy's:
only the host sees its node's answer, and only the inference's executor may sign ``MsgFinishInference``.

What a finish says about an answer (``Digest``), the same for a stream and a whole answer:

- ``response_hash`` = sha256 of the UTF-8 of the answer's text: the choices in ascending ``index``, each one's
  ``message.content`` (a stream: its ``delta.content`` pieces in arrival order), concatenated; a null content
  is "";
- ``prompt_tokens``, ``completion_tokens`` from the answer's ``usage``. A stream whose request did not ask for
  usage is sent to the node with ``stream_options.include_usage`` on, and the usage is taken out of what the
  client gets (the usage-only last chunk dropped, ``usage`` removed from the others); a stream that still
  carries no usage counts one completion token per chunk with non-empty content, and 0 prompt tokens. A whole
  answer without usage is not finished;
- ``logprobs_digest`` = sha256 of the canonical JSON (sorted keys, no spaces, ASCII) of the list, one entry per
  choice in ascending ``index``, of that choice's token logprobs (``logprobs.content``; a stream: its chunks'
  ``logprobs.content`` lists concatenated; [] for a choice without) — or sha256(b"") when no choice has
  logprobs.

Only a complete answer is finished: status 200 and, for a stream, ``data: [DONE]`` with no ``{"error": …}``
event before it. A node that fails, an error answer: nothing is finished, and the inference expires on chain and
is refunded. Nor is an answer that never reached the TA: while the node works, the proxy watches the TA's
connection (ASGI ``http.disconnect``), and when the TA leaves first (it died, or its client left) the request to
the node is closed (which frees its slot there) and counted as ``abandoned``. The client's retry through another
TA then takes the inference over on chain, and no finish from this host lands first to spoil it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agent.auth import check_forwarded, header
from agent.errors import AgentError, stream_failure_event
from agent.server import read_body, send_error, send_json, uvicorn_config
from agent.terms import ChatTerms, parse_request, parse_terms, terms_mismatch
from agent.upstream import Pool, Response, UpstreamError, next_chunk
from sdk.client.rpc import RPCError
from sdk.client.signing import canonical_json
from sdk.crypto import secp256k1
from sdk.crypto.request import sign_release
from x.inference.client import ChainError, Finish

log = logging.getLogger("gonka.executor")
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
EVENT_END = re.compile(rb"\r?\n\r?\n")
EMPTY_DIGEST = hashlib.sha256(b"").digest()
PASS_THROUGH = ("/health", "/v1/models", "/v1/node/info")


class FinishSink(Protocol):
    """Where finishes go: ``x.inference.client.Finisher`` (tests record them)."""

    def submit(self, finish: Finish) -> Any: ...


class Escrowed(Protocol):
    """The terms a start escrowed: ``MsgStartInference`` or the committed ``Inference`` record."""

    model: str
    max_tokens: int
    seed: int
    params_hash: bytes


class Admission(Protocol):
    """Whether the chain will pay this host for an inference (``x.inference.client.StartAdmission``); each method
    raises ``ChainError`` (refused) or ``RPCError`` (the host's node did not answer). Synchronous; run off the loop."""

    def admit(self, inference_id: bytes, start_tx: bytes) -> Escrowed | None:
        """The quick checks before the node works: the start ``start_tx`` carries (None: a reassignment)."""
        ...

    def confirm(self, inference_id: bytes) -> Escrowed:
        """Blocks until the chain has committed the inference as started with this host as its executor: the
        record. Nothing of the answer leaves the host before."""
        ...


class ExecutorConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    mlnode: str
    """The ML node's base URL (http)."""
    finisher: Any
    """A ``FinishSink``; its ``status()`` (when it has one) is ``GET /v1/executor/status``."""
    admission: Any
    """An ``Admission``: asked before the node works on a request."""
    release_key: secp256k1.PrivateKey | None = None
    """The host's key: when its node fails before answering, the TA gets its release (``X-Release``) and may
    reassign the inference at once (x/inference README, "Reassignment"); without a key, only after the executor
    window."""
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, lt=65536)
    connect_timeout_s: float = Field(2.0, gt=0)
    upstream_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for the node's answer (a stream's first bytes), then between two chunks of a stream."""
    pass_through_timeout_s: float = Field(5.0, gt=0)
    max_body_bytes: int = Field(4 << 20, ge=1024)
    admission_threads: int = Field(64, ge=1)
    kept_answers: int = Field(4096, ge=0)
    """Recent answers kept to serve again to the same signed request (a client's failover, ``answer_again``)."""


class Digest:
    """The finish of one answer, built from a whole answer (``answer``) or event by event (``event``)."""

    def __init__(self) -> None:
        self.text: dict[int, list[str]] = {}
        self.logprobs: dict[int, list[Any]] = {}
        self.has_logprobs = False
        self.usage: dict[str, Any] | None = None
        self.pieces = 0
        """Chunks with non-empty content: the completion count of a stream without usage."""

    def _choice(self, choice: dict[str, Any], part: str) -> None:
        index = choice.get("index", 0)
        content = (choice.get(part) or {}).get("content")
        if isinstance(content, str) and content:
            self.text.setdefault(index, []).append(content)
            self.pieces += 1
        else:
            self.text.setdefault(index, [])
        logprobs = choice.get("logprobs")
        entries = self.logprobs.setdefault(index, [])
        if isinstance(logprobs, dict):
            self.has_logprobs = True
            entries.extend(logprobs.get("content") or [])

    def answer(self, answer: dict[str, Any]) -> None:
        for choice in answer.get("choices") or []:
            self._choice(choice, "message")
        self.usage = answer.get("usage") or None

    def event(self, chunk: dict[str, Any]) -> None:
        for choice in chunk.get("choices") or []:
            self._choice(choice, "delta")
        if chunk.get("usage"):
            self.usage = chunk["usage"]

    def response_hash(self) -> bytes:
        text = "".join("".join(self.text[index]) for index in sorted(self.text))
        return hashlib.sha256(text.encode()).digest()

    def logprobs_digest(self) -> bytes:
        if not self.has_logprobs:
            return EMPTY_DIGEST
        return hashlib.sha256(canonical_json([self.logprobs[index] for index in sorted(self.logprobs)])).digest()

    def tokens(self, counted: bool) -> tuple[int, int] | None:
        """(prompt, completion) from the usage; when there is none, the counted pieces if ``counted``, else None."""
        if self.usage is not None:
            try:
                return int(self.usage["prompt_tokens"]), int(self.usage["completion_tokens"])
            except (KeyError, TypeError, ValueError):
                return None
        return (0, self.pieces) if counted else None

    def finish(self, inference_id: bytes, counted: bool) -> Finish | None:
        tokens = self.tokens(counted)
        if tokens is None or min(tokens) < 0:
            return None
        return Finish(inference_id, self.response_hash(), tokens[0], tokens[1], self.logprobs_digest())


def finish_of_answer(inference_id: bytes, answer: dict[str, Any]) -> Finish | None:
    """The finish of a whole (non-stream) answer; None when it has no usage."""
    digest = Digest()
    digest.answer(answer)
    return digest.finish(inference_id, counted=False)


def node_body(request: dict[str, Any], terms: ChatTerms, escrowed: Escrowed, body: bytes) -> bytes:
    """What the node is asked for a request whose start escrowed ``escrowed``: the forwarded body, with
    ``max_tokens`` set when the body left it to the TA's default and usage asked for in a stream that did not ask
    (the finish needs it; ``_event`` takes it out again); 402 ``terms_mismatch`` unless the body's model,
    max_tokens, seed and sampling parameters are those the start escrowed (its ``params_hash``), so the host
    answers only what it is paid for."""
    if terms.model != escrowed.model:
        raise terms_mismatch(f"the body asks for {terms.model!r}, its start is for {escrowed.model!r}")
    if terms.max_tokens not in (None, escrowed.max_tokens):
        raise terms_mismatch(f"the body asks for {terms.max_tokens} tokens, its start escrowed "
                             f"{escrowed.max_tokens}")
    if terms.seed != escrowed.seed:
        raise terms_mismatch(f"the body's seed {terms.seed} is not its start's {escrowed.seed}")
    if terms.params_hash(escrowed.max_tokens, escrowed.seed) != escrowed.params_hash:
        raise terms_mismatch("the body's sampling parameters are not those its start escrowed (params_hash)")
    changes: dict[str, Any] = {}
    if terms.max_tokens is None:
        changes["max_tokens"] = escrowed.max_tokens
    if terms.stream and not terms.include_usage:
        changes["stream_options"] = {**(request.get("stream_options") or {}), "include_usage": True}
    if not changes:
        return body
    return json.dumps({**request, **changes}, separators=(",", ":"), ensure_ascii=False).encode()


def event_data(event: bytes) -> bytes | None:
    """The data of one server-sent event (its ``data:`` lines joined), None when it has none."""
    lines = [line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:")]
    return b"\n".join(lines) if lines else None


class Executor:
    """The ASGI app; the ASGI lifespan closes its connections to the node (the finisher is its owner's)."""

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.finisher = config.finisher
        self.pool = Pool(config.mlnode, config.connect_timeout_s)
        self.pass_through_pool = Pool(config.mlnode, config.connect_timeout_s)
        self.refused = 0
        self.served = 0
        self.abandoned = 0
        self.unfinished = 0
        """Answers relayed whole or in part that cannot be finished (no usage; a stream that broke): refunded when
        the inference expires."""
        """Answers the TA left before they reached it (it died, or its client left): never finished."""
        self.unpaid = 0
        """Requests refused because the chain would not pay for them (no start, or no funds behind it)."""
        self.answers: OrderedDict[bytes, tuple[bytes, bytes]] = OrderedDict()
        """Inference id → (content type, the bytes the TA got) of the last ``kept_answers`` finished answers."""
        self.replayed = 0
        self.running: dict[bytes, asyncio.Future[None]] = {}
        """Inference ids being answered now (``one_answer``)."""
        self.admitting = ThreadPoolExecutor(config.admission_threads, thread_name_prefix="admission")
        """Admissions wait on the chain node (and a start may wait for its TA's earlier ones), so they get threads
        of their own rather than asyncio's few shared ones."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    self.pool.close()
                    self.pass_through_pool.close()
                    self.admitting.shutdown(wait=False, cancel_futures=True)
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if kind != "http":
            return
        method, path = scope["method"], scope["path"]
        try:
            if (method, path) == ("POST", "/v1/chat/completions"):
                await self.chat(scope, receive, send)
            elif method == "GET" and path in PASS_THROUGH:
                await self.pass_through(path, send)
            elif (method, path) == ("GET", "/v1/executor/status"):
                status = getattr(self.finisher, "status", None)
                document = status() if status is not None else {}
                await send_json(send, 200, {**document, "served": self.served, "refused": self.refused,
                                            "unpaid": self.unpaid, "abandoned": self.abandoned,
                                            "replayed": self.replayed, "unfinished": self.unfinished})
            else:
                raise AgentError(404, f"Invalid URL ({method} {path})")
        except AgentError as error:
            await send_error(send, error)

    async def pass_through(self, path: str, send: Send) -> None:
        timeout = self.config.pass_through_timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await self.pass_through_pool.request("GET", path, timeout_s=timeout)
                data = await response.read()
        except (UpstreamError, TimeoutError) as error:
            raise AgentError(502, f"The ML node did not answer: {error!r}", "server_error", "upstream_failed") from None
        content_type = response.headers.get("content-type", "application/json").encode()
        await send({"type": "http.response.start", "status": response.status,
                    "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": data})

    async def chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive, self.config.max_body_bytes)
        if body is None:
            return
        headers = dict(scope["headers"])
        try:
            requester, ta = check_forwarded(headers, body)
        except AgentError:
            self.refused += 1
            raise
        request = parse_request(body)
        terms = parse_terms(request)
        inference_id = requester.inference_id
        async with self.one_answer(inference_id):
            if await self.answer_again(inference_id, send):
                return
            start = await self.admit(inference_id, header(headers, b"x-start-tx"))
            confirming = asyncio.get_running_loop().run_in_executor(
                self.admitting, self.config.admission.confirm, inference_id)
            gone = asyncio.ensure_future(receive())  # the body read whole, the TA's next message is its leaving
            asking: asyncio.Future[Any] | None = None
            try:
                if start is not None:  # the node works while the start goes into a block
                    asking = asyncio.ensure_future(self._ask(node_body(request, terms, start, body), terms.stream))
                await asyncio.wait((confirming, gone), return_when=asyncio.FIRST_COMPLETED)
                if not confirming.done():
                    self._abandon(inference_id, "before the start was in a block")
                    return
                record = await self.chain_answer(inference_id, confirming)
                node_request = node_body(request, terms, record, body)
                if asking is None:
                    asking = asyncio.ensure_future(self._ask(node_request, terms.stream))
                await self.answer(inference_id, ta, terms, asking, gone, send)
            finally:
                gone.cancel()
                confirming.cancel()
                if asking is not None and not asking.done():
                    asking.cancel()  # refused, or the TA left: the node's request is closed

    @asynccontextmanager
    async def one_answer(self, inference_id: bytes) -> AsyncIterator[None]:
        """One request per inference id at a time: the same signed request again (through another TA, or twice
        through one) waits for the first, then gets its kept answer (``answer_again``); so one payment never buys
        two answers from this host."""
        while (running := self.running.get(inference_id)) is not None:
            await asyncio.shield(running)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.running[inference_id] = done
        try:
            yield
        finally:
            del self.running[inference_id]
            done.set_result(None)

    async def chain_answer(self, inference_id: bytes, asking: Awaitable[Any]) -> Any:
        """What the admission answered (``admit``'s start, ``confirm``'s record); 402 ``unpaid`` when the chain will
        not pay this host, 503 when the host's chain node does not answer (the TA then tries another host)."""
        try:
            return await asking
        except ChainError as error:
            self.unpaid += 1
            log.warning("inference %s refused: %s", inference_id.hex(), error)
            raise AgentError(402, f"This host will not be paid for the request: {error.message}",
                             "invalid_request_error", "unpaid") from None
        except RPCError as error:
            raise AgentError(503, f"The host's chain node did not answer: {error}", "server_error",
                             "chain_unavailable") from None

    async def answer(self, inference_id: bytes, ta: str, terms: ChatTerms, asking: asyncio.Future[Any],
                     gone: asyncio.Future[Any], send: Send) -> None:
        """Relay the node's answer (paid for: confirmed on chain) unless the TA leaves first."""
        await asyncio.wait((asking, gone), return_when=asyncio.FIRST_COMPLETED)
        if gone.done():  # not answered, not finished: a finish here could beat a take-over by another TA
            if not asking.cancel() and asking.exception() is None:
                asking.result()[0].close()  # the answer came at the same moment; a failure closed it already
            self._abandon(inference_id, "before the answer")
            return
        try:
            response, data, chunks = asking.result()
        except (UpstreamError, TimeoutError) as error:
            log.warning("inference %s: the ML node failed: %r", inference_id.hex(), error)
            raise AgentError(502, "The ML node failed before answering.", "server_error", "upstream_failed",
                             headers=dict(self.release(inference_id))) from None
        if chunks is None:
            content_type = response.headers.get("content-type", "application/json").encode()
            failed = response.status >= 500 or response.status == 429  # the TA tries another host
            release = [(k.encode(), v.encode()) for k, v in self.release(inference_id)] if failed else []
            await send({"type": "http.response.start", "status": response.status,
                        "headers": [(b"content-type", content_type), *release]})
            await send({"type": "http.response.body", "body": data})
            if response.status == 200 and self._finish(inference_id, ta, data):
                self._keep(inference_id, content_type, data)
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        await self._relay(inference_id, ta, response, data, chunks, not terms.include_usage, gone, send)

    async def answer_again(self, inference_id: bytes, send: Send) -> bool:
        """The answer this host already gave to this signed request (its id: the requester's signature over the
        same body and timestamp, whichever TA it came through), sent again; False when none is kept. A client whose
        TA died after the answer reached it retries through another TA, which the chain tells that the inference
        is finished here: it gets the same answer, paid once, and the node does not run it again."""
        kept = self.answers.get(inference_id)
        if kept is None:
            return False
        content_type, data = kept
        self.replayed += 1
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": data})
        return True

    def release(self, inference_id: bytes) -> list[tuple[str, str]]:
        """The ``X-Release`` header (hex of the host's key ‖ its release signature) for an inference this host will
        not answer, so its TA may give it to another host at once; none without a key."""
        key = self.config.release_key
        if key is None:
            return []
        return [("x-release", (key.public_key + sign_release(key, inference_id)).hex())]

    def _keep(self, inference_id: bytes, content_type: bytes, data: bytes) -> None:
        if self.config.kept_answers:
            self.answers[inference_id] = (content_type, data)
            while len(self.answers) > self.config.kept_answers:
                self.answers.popitem(last=False)

    async def admit(self, inference_id: bytes, start_tx: str | None) -> Any:
        """The quick checks before the node works (``ExecutorConfig.admission``): the start the TA sent along
        (None for a reassignment); 402 ``unpaid`` when it will surely not be paid, 503 when the host's chain node
        does not answer (the TA then tries another host)."""
        try:
            raw = base64.b64decode(start_tx or "", validate=True)
        except ValueError:
            raw = b""
        return await self.chain_answer(inference_id, asyncio.get_running_loop().run_in_executor(
            self.admitting, self.config.admission.admit, inference_id, raw))

    async def _ask(self, body: bytes, stream: bool) -> tuple[Response, bytes, AsyncIterator[bytes] | None]:
        """Send the request to the node: its response and whole body, or, for a stream it answers with 200, its
        first chunk and the rest of its chunks. The response is closed when this fails or is cancelled."""
        response: Response | None = None
        try:
            async with asyncio.timeout(self.config.upstream_timeout_s):
                response = await self.pool.request("POST", "/v1/chat/completions", body, timeout_s=None)
                if stream and response.status == 200:
                    chunks = response.chunks()
                    return response, await anext(chunks, b""), chunks
                return response, await response.read(), None
        except BaseException:  # cancellation included: the TA left
            if response is not None:
                response.close()
            raise

    def _abandon(self, inference_id: bytes, when: str) -> None:
        self.abandoned += 1
        log.warning("inference %s: the TA left %s, nothing to finish", inference_id.hex(), when)

    def _finish(self, inference_id: bytes, ta: str, data: bytes) -> bool:
        """Hand the answer's finish to the finisher; whether it had one."""
        try:
            answer = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            answer = None
        finish = finish_of_answer(inference_id, answer) if isinstance(answer, dict) else None
        if finish is None:
            log.warning("inference %s (TA %s): the answer has no usage, nothing to finish", inference_id.hex(), ta)
            self.unfinished += 1
            return False
        self.served += 1
        self.finisher.submit(finish)
        return True

    async def _relay(self, inference_id: bytes, ta: str, response: Response, first: bytes,
                     chunks: AsyncIterator[bytes], strip_usage: bool, gone: asyncio.Future[Any], send: Send) -> None:
        """Relay the stream event by event, reading each event into the digest; finish once ``[DONE]`` came,
        unless ``gone`` (the TA left) first."""
        digest = Digest()
        buffer = b""
        relayed: list[bytes] = []
        done = failed = False
        timeout = self.config.upstream_timeout_s
        chunk = first
        while True:
            buffer += chunk
            out: list[bytes] = []
            start = 0
            for end in EVENT_END.finditer(buffer):
                event = buffer[start:end.end()]
                start = end.end()
                kept = self._event(event, digest, strip_usage)
                if kept == b"[DONE]":
                    done = True
                    out.append(event)
                elif kept is None:
                    failed = True
                    out.append(event)
                elif kept:
                    out.append(kept)
            buffer = buffer[start:]
            if gone.done():
                response.close()  # closing the node's stream frees its slot
                self._abandon(inference_id, "mid-stream")
                return
            if out:
                relayed += out
                await send({"type": "http.response.body", "body": b"".join(out), "more_body": True})
            try:
                following = await next_chunk(chunks, timeout)
            except (UpstreamError, TimeoutError) as error:
                response.close()
                await send({"type": "http.response.body", "more_body": True, "body": stream_failure_event()})
                log.warning("inference %s: the ML node failed mid-stream: %r", inference_id.hex(), error)
                done, failed = False, True
                break
            if following is None:
                break
            chunk = following
        if buffer:
            await send({"type": "http.response.body", "body": buffer, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        if not done or failed:
            log.warning("inference %s: the stream did not end whole, nothing to finish", inference_id.hex())
            self.unfinished += 1
            return
        finish = digest.finish(inference_id, counted=True)
        if finish is not None:
            self.served += 1
            self.finisher.submit(finish)
            self._keep(inference_id, b"text/event-stream", b"".join([*relayed, buffer]))

    @staticmethod
    def _event(event: bytes, digest: Digest, strip_usage: bool) -> bytes | None:
        """What of ``event`` goes to the client: itself, rewritten (usage taken out), b"" (dropped), b"[DONE]" for
        the end, or None for an error event (relayed as it is)."""
        data = event_data(event)
        if data is None:
            return event
        if data.strip() == b"[DONE]":
            return b"[DONE]"
        try:
            chunk = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return event
        if not isinstance(chunk, dict):
            return event
        if "error" in chunk:
            return None
        digest.event(chunk)
        if not strip_usage or "usage" not in chunk:
            return event
        if not chunk.get("choices"):
            return b""  # the usage-only chunk the client did not ask for
        del chunk["usage"]
        return b"data: " + json.dumps(chunk, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


__all__ = ["Digest", "Executor", "ExecutorConfig", "FinishSink", "finish_of_answer", "uvicorn_config"]
