"""The executor proxy: the host's side of an inference, a bare ASGI app in front of one ML node
(``host/README.md`` is its spec).

    GET  /health, /v1/models, /v1/node/info   passed through to the ML node
    POST /v1/chat/completions                 a request a TA forwarded: checked (``sdk.http.signed``), parsed as
                                              the TA parses it (``x.inference.client.terms``), admitted only if
                                              the chain will pay for it (the start the TA sent along,
                                              ``host.admission.StartAdmission``; 402 otherwise) on the terms its
                                              body asks (``host.terms.node_body``), sent to the ML node, its answer
                                              relayed once the start is committed (less what the client did not ask
                                              for: ``host.shown``), the node's whole answer kept for PoC V2
                                              (``host.poc.Payloads``) and its finish handed to the finisher
                                              (``host.finisher.Finisher``)
    GET  /v1/executor/status                  the finisher's counts and last outcomes, and the proxy's (``Counts``);
                                              ``"sprint"``: the race duties' (``host.sprint.SprintCounts``);
                                              ``"poc"``: PoC V2's (``host.poc``)
    POST /v1/poc/payload                      an inference's payload (its request body, the node's answer), for the
                                              hosts the chain drew to re-execute it (``host.poc.Payloads``)
    GET  /v1/sprint/openings?epoch&validator  the leaves of this host's race commitment a validator samples
                                              (``host.sprint.openings``)
    GET  /models/<sha256>/manifest.json       a model the host publishes: its files with sizes and SHA-256, its
    GET  /models/<sha256>/<file>              identity, and each file (``host.models``); a request for a model the
                                              host fetched goes to that model's own ML node
    GET  /v1/training/<run>/<round>/<worker>/<file>
                                              one file of a round's replay data of this host's own worker
                                              (``host.training``), for the verifiers the chain draws

A host serves an answer only when the chain is certain to pay for it: the node may start on a request once the
quick checks pass (``admit``), but nothing of its answer leaves the host before the start (or reassignment) is in
a committed block with this host as executor (``confirm``), and the same inference id is answered once
(``one_answer``; a second request for it gets the first's kept answer). The cost is the wait for that block
(bench/RESULTS.md).

The URL a host registers on chain for its node (``gonkad tx inference register-node … URL``) is this proxy's:
only the host sees its node's answer, and only the inference's executor may sign ``MsgFinishInference``.

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
import json
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from host.config import ExecutorConfig
from host.counters import Counts
from host.digest import Digest, event_data
from host.faults import forge, forged
from host.models.serve import MODEL_FILE, send_model_file
from host.shown import Shown
from host.terms import node_body
from host.training.serve import TRAINING_FILE, send_replay_file
from sdk.client.rpc import RPCError
from sdk.crypto.request import sign_release
from sdk.http.asgi import Receive, Scope, Send, read_body, send_error, send_json
from sdk.http.errors import ApiError, stream_failure_event
from sdk.http.signed import check_forwarded, header
from sdk.http.upstream import Pool, Response, UpstreamError, next_chunk
from x.inference.client import ChainError, parse_request, parse_terms

log = logging.getLogger("gonka.executor")
EVENT_END = re.compile(rb"\r?\n\r?\n")
PASS_THROUGH = ("/health", "/v1/models", "/v1/node/info")
PAYLOAD_REQUEST_BYTES = 4096
"""A payload request is a few hundred bytes of JSON."""


@dataclass(frozen=True)
class Served:
    """One admitted request, as its answer is relayed, finished and kept."""

    inference_id: bytes
    ta: str
    signed: bytes
    """The bytes its requester signed (sha256: the chain's ``body_hash``): the body PoC V2 keeps."""
    shown: Shown
    forged: bool = False
    """TEST ONLY (``host.faults``): the node's logprobs are replaced by made-up ones before anything reads them."""


class Executor:
    """The ASGI app; the ASGI lifespan closes its connections to the node (the finisher is its owner's)."""

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.finisher = config.finisher
        self.pool = Pool(config.mlnode, config.connect_timeout_s)
        self.pass_through_pool = Pool(config.mlnode, config.connect_timeout_s)
        self.model_pools: dict[str, Pool] = {}
        """The fetched models' ML nodes, by URL (``config.models``)."""
        self.counts = Counts()
        self.answers: OrderedDict[bytes, tuple[bytes, bytes]] = OrderedDict()
        """Inference id → (content type, the bytes the TA got) of the last ``kept_answers`` finished answers."""
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
                    for pool in self.model_pools.values():
                        pool.close()
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
                await send_json(send, 200, self.status())
            elif (method, path) == ("POST", "/v1/poc/payload") and self.config.payloads is not None:
                await self.payload(receive, send)
            elif (method, path) == ("GET", "/v1/sprint/openings") and self.config.sprint is not None:
                query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                serve = self.config.sprint.openings.serve
                await send_json(
                    send, 200, await asyncio.get_running_loop().run_in_executor(self.admitting, serve, query)
                )
            elif method == "GET" and self.config.store is not None and (found := MODEL_FILE.match(path)):
                await send_model_file(send, self.config.store, found.group(1), found.group(2))
            elif method == "GET" and self.config.replay_data is not None and (found := TRAINING_FILE.match(path)):
                await send_replay_file(send, self.config.replay_data, found)
            else:
                raise ApiError(404, f"Invalid URL ({method} {path})")
        except ApiError as error:
            await send_error(send, error)

    def status(self) -> dict[str, Any]:
        """The finisher's status, the proxy's counts, the race duties' when the host races, and PoC V2's (the
        payloads kept and served, the validations) when it keeps payloads or validates."""
        status = getattr(self.finisher, "status", None)
        document = {**(status() if status is not None else {}), **self.counts.as_dict()}
        if self.config.sprint is not None:
            document["sprint"] = self.config.sprint.status()
        poc = [part.status() for part in (self.config.payloads, self.config.poc) if part is not None]
        if poc:
            document["poc"] = {key: value for part in poc for key, value in part.items()}
        if self.config.models is not None:
            document["models"] = self.config.models.status()
        if self.config.training is not None:
            document["training"] = self.config.training.status()
        return document

    async def payload(self, receive: Receive, send: Send) -> None:
        """``POST /v1/poc/payload``: an inference's payload, for the validator the chain drew (``host.poc.Payloads``);
        it reads the chain, so it runs on a thread."""
        body = await read_body(receive, PAYLOAD_REQUEST_BYTES)
        if body is None:
            return
        serve = self.config.payloads.serve
        await send_json(send, 200, await asyncio.get_running_loop().run_in_executor(self.admitting, serve, body))

    async def pass_through(self, path: str, send: Send) -> None:
        timeout = self.config.pass_through_timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await self.pass_through_pool.request("GET", path, timeout_s=timeout)
                data = await response.read()
        except (UpstreamError, TimeoutError) as error:
            raise ApiError(502, f"The ML node did not answer: {error!r}", "server_error", "upstream_failed") from None
        content_type = response.headers.get("content-type", "application/json").encode()
        await send(
            {"type": "http.response.start", "status": response.status, "headers": [(b"content-type", content_type)]}
        )
        await send({"type": "http.response.body", "body": data})

    async def chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive, self.config.max_body_bytes)
        if body is None:
            return
        headers = dict(scope["headers"])
        try:
            requester, ta, signed = check_forwarded(headers, body)
        except ApiError:
            self.counts.refused += 1
            raise
        request = parse_request(body)
        terms = parse_terms(request)
        inference_id = requester.inference_id
        served = Served(inference_id, ta, signed, Shown.of(request, terms), forged(self.config.fault, inference_id))
        async with self.one_answer(inference_id):
            if await self.answer_again(inference_id, send):
                return
            start = await self.admit(inference_id, header(headers, b"x-start-tx"))
            confirming = asyncio.get_running_loop().run_in_executor(
                self.admitting, self.config.admission.confirm, inference_id
            )
            gone = asyncio.ensure_future(receive())  # the body read whole, the TA's next message is its leaving
            asking: asyncio.Future[Any] | None = None
            try:
                if start is not None:  # the node works while the start goes into a block
                    asking = asyncio.ensure_future(
                        self._ask(node_body(request, terms, start, body), terms.stream, terms.model)
                    )
                await asyncio.wait((confirming, gone), return_when=asyncio.FIRST_COMPLETED)
                if not confirming.done():
                    self._abandon(inference_id, "before the start was in a block")
                    return
                record = await self.chain_answer(inference_id, confirming)
                node_request = node_body(request, terms, record, body)
                if asking is None:
                    asking = asyncio.ensure_future(self._ask(node_request, terms.stream, terms.model))
                await self.answer(served, asking, gone, send)
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
            self.counts.unpaid += 1
            log.warning("inference %s refused: %s", inference_id.hex(), error)
            raise ApiError(
                402, f"This host will not be paid for the request: {error.message}", "invalid_request_error", "unpaid"
            ) from None
        except RPCError as error:
            raise ApiError(
                503, f"The host's chain node did not answer: {error}", "server_error", "chain_unavailable"
            ) from None

    async def answer(self, served: Served, asking: asyncio.Future[Any], gone: asyncio.Future[Any], send: Send) -> None:
        """Relay the node's answer (paid for: confirmed on chain) unless the TA leaves first."""
        inference_id = served.inference_id
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
            raise ApiError(
                502,
                "The ML node failed before answering.",
                "server_error",
                "upstream_failed",
                headers=dict(self.release(inference_id)),
            ) from None
        if chunks is None:
            content_type = response.headers.get("content-type", "application/json").encode()
            failed = response.status >= 500 or response.status == 429  # the TA tries another host
            release = [(k.encode(), v.encode()) for k, v in self.release(inference_id)] if failed else []
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status,
                    "headers": [(b"content-type", content_type), *release],
                }
            )
            if response.status != 200:
                await send({"type": "http.response.body", "body": data})
                return
            digest, shown = self._read(served, data)
            await send({"type": "http.response.body", "body": shown})
            if self._finish(served, digest):
                self._keep(inference_id, content_type, shown)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
            }
        )
        await self._relay(served, response, data, chunks, gone, send)

    async def answer_again(self, inference_id: bytes, send: Send) -> bool:
        """The answer this host already gave to this signed request (its id: the requester's signature over the
        same body and timestamp, whichever TA it came through), sent again; False when none is kept. A client whose
        TA died after the answer reached it retries through another TA, which the chain tells that the inference
        is finished here: it gets the same answer, paid once, and the node does not run it again."""
        kept = self.answers.get(inference_id)
        if kept is None:
            return False
        content_type, data = kept
        self.counts.replayed += 1
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
        return await self.chain_answer(
            inference_id,
            asyncio.get_running_loop().run_in_executor(self.admitting, self.config.admission.admit, inference_id, raw),
        )

    def _pool(self, model: str) -> Pool:
        """The pool of the ML node serving ``model``: a fetched model's own node, else the host's node."""
        url = None if self.config.models is None else self.config.models.upstream(model)
        if url is None:
            return self.pool
        if url not in self.model_pools:
            self.model_pools[url] = Pool(url, self.config.connect_timeout_s)
        return self.model_pools[url]

    async def _ask(self, body: bytes, stream: bool, model: str) -> tuple[Response, bytes, AsyncIterator[bytes] | None]:
        """Send the request to the node serving ``model``: its response and whole body, or, for a stream it answers
        with 200, its first chunk and the rest of its chunks. The response is closed when this fails or is
        cancelled."""
        response: Response | None = None
        try:
            async with asyncio.timeout(self.config.upstream_timeout_s):
                response = await self._pool(model).request("POST", "/v1/chat/completions", body, timeout_s=None)
                if stream and response.status == 200:
                    chunks = response.chunks()
                    return response, await anext(chunks, b""), chunks
                return response, await response.read(), None
        except BaseException:  # cancellation included: the TA left
            if response is not None:
                response.close()
            raise

    def _abandon(self, inference_id: bytes, when: str) -> None:
        self.counts.abandoned += 1
        log.warning("inference %s: the TA left %s, nothing to finish", inference_id.hex(), when)

    @staticmethod
    def _read(served: Served, data: bytes) -> tuple[Digest, bytes]:
        """A whole answer read once: its digest (the node's answer, as kept) and the bytes the client gets."""
        try:
            answer = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            answer = None
        digest = Digest()
        if not isinstance(answer, dict):
            return digest, data
        if served.forged:
            forge(answer.get("choices"))
            data = json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()
        digest.answer(answer)
        return digest, served.shown.answer(answer, data)

    def _finish(self, served: Served, digest: Digest) -> bool:
        """Hand a whole answer's finish to the finisher; whether it had one."""
        if not self._hand_over(served, digest, counted=False):
            log.warning(
                "inference %s (TA %s): the answer has no usage, nothing to finish", served.inference_id.hex(), served.ta
            )
            self.counts.unfinished += 1
            return False
        return True

    def _hand_over(self, served: Served, digest: Digest, counted: bool) -> bool:
        """Keep the node's answer for PoC V2 (``ExecutorConfig.payloads``), then hand its finish to the finisher;
        whether it had one. Kept first: once the finish is on chain, the drawn validator may ask for it."""
        finish = digest.finish(served.inference_id, counted)
        if finish is None:
            return False
        if self.config.payloads is not None:
            self.config.payloads.keep(served.inference_id, served.signed, digest.kept())
        self.counts.served += 1
        self.finisher.submit(finish)
        return True

    async def _relay(
        self,
        served: Served,
        response: Response,
        first: bytes,
        chunks: AsyncIterator[bytes],
        gone: asyncio.Future[Any],
        send: Send,
    ) -> None:
        """Relay the stream event by event, reading each event into the digest; finish once ``[DONE]`` came,
        unless ``gone`` (the TA left) first."""
        inference_id = served.inference_id
        digest = Digest()
        buffer = b""
        relayed: list[bytes] = []
        done = failed = False
        timeout = self.config.upstream_timeout_s
        chunk = first
        while True:
            out, buffer, ended, errored = self._events(buffer + chunk, digest, served)
            done, failed = done or ended, failed or errored
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
        self._finish_stream(served, digest, done and not failed, b"".join([*relayed, buffer]))

    def _events(self, buffer: bytes, digest: Digest, served: Served) -> tuple[list[bytes], bytes, bool, bool]:
        """The whole events at the head of ``buffer``: what of them goes to the client, the rest of ``buffer``,
        whether ``[DONE]`` was among them and whether an error event was."""
        out: list[bytes] = []
        done = failed = False
        start = 0
        for end in EVENT_END.finditer(buffer):
            event = buffer[start : end.end()]
            start = end.end()
            kept = self._event(event, digest, served)
            if kept == b"[DONE]":
                done = True
                out.append(event)
            elif kept is None:
                failed = True
                out.append(event)
            elif kept:
                out.append(kept)
        return out, buffer[start:], done, failed

    def _finish_stream(self, served: Served, digest: Digest, whole: bool, body: bytes) -> None:
        """Finish a relayed stream on chain and keep what was sent (``body``), if it ended ``whole``: ``[DONE]``
        came and no error event."""
        if not whole:
            log.warning("inference %s: the stream did not end whole, nothing to finish", served.inference_id.hex())
            self.counts.unfinished += 1
            return
        if self._hand_over(served, digest, counted=True):
            self._keep(served.inference_id, b"text/event-stream", body)

    @staticmethod
    def _event(event: bytes, digest: Digest, served: Served) -> bytes | None:
        """What of ``event`` goes to the client: itself, rewritten (what it did not ask for taken out: ``Shown``),
        b"" (dropped), b"[DONE]" for the end, or None for an error event (relayed as it is)."""
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
        if served.forged:
            forge(chunk.get("choices"))
        digest.event(chunk)
        changed = served.shown.chunk(chunk)
        if changed is None:
            return b""  # the usage-only chunk the client did not ask for
        if not changed and not served.forged:
            return event
        return b"data: " + json.dumps(chunk, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"
