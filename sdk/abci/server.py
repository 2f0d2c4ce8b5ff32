"""asyncio ABCI 2.0 socket server for CometBFT v0.38.

CometBFT opens four connections (consensus, mempool, query, snapshot) and
pipelines requests, sending ``Flush`` when it wants the answers.  Each
connection is served by one task that reads a chunk, cuts it into frames,
answers every request in order, and writes the batch of responses with a
single ``write``.  Application methods are plain functions run on the event
loop with no ``await`` between them, so two calls never interleave, with one
exception: a ``Query`` may come back from ``Application.begin_query`` as a job,
which runs on a worker thread (``workers``) while this connection awaits it and
the loop goes on answering the others.  Such a job reads only what the app
captured for it on the loop (BaseApp: a snapshot of the committed state), so
consensus never waits behind a query and a query never sees a half-made block.
Without ``workers`` the job runs at once on the loop, as every other call.

Consensus comes first.  A connection that has carried a consensus request
(``CONSENSUS_REQUESTS``) answers each chunk at once; every other connection
(mempool, query, snapshot) answers ``SLICE`` frames, writes those answers,
yields to the loop and then waits while a consensus request is only partly
received.  So a flood of CheckTx (a 1 MB chunk holds thousands) delays a
PrepareProposal, ProcessProposal or FinalizeBlock by a slice or two, not by
the whole batch.  Each connection still answers in request order, and a
``Flush`` is answered only after every earlier request of its connection.
CometBFT flushes the mempool connection before each Commit, so the CheckTx
it sent before then are all answered before that Commit is sent.

Failure policy mirrors CometBFT's own Go socket server
(abci/server/socket_server.go): a stream that cannot be framed or parsed
closes that connection only; an application exception is answered with a
``ResponseException`` and the connection is then closed (CometBFT stops on
it), while the listener and the other connections keep running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor

from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import DecodeError, Message

from sdk.workers import run_job

from .application import Application
from .framing import DEFAULT_MAX_FRAME, FrameDecoder, FrameError, encode_frame, encode_uvarint

log = logging.getLogger("sdk.abci")
QueryJob = Callable[[], abci.ResponseQuery]
Observer = Callable[[str, Message, Message, float], None]
"""Told of each answered request: its kind (the Request oneof's name), the request and the answer, and the
seconds the app took (a query job's time on its worker included); the node's metrics (sdk/telemetry)."""

READ_CHUNK = 1 << 20
SLICE = 32
"""Frames a non-consensus connection answers before it lets consensus run (32 CheckTx: a few milliseconds)."""

CONSENSUS_REQUESTS = frozenset(
    {
        "init_chain",
        "prepare_proposal",
        "process_proposal",
        "extend_vote",
        "verify_vote_extension",
        "finalize_block",
        "commit",
    }
)
"""Requests only CometBFT's consensus connection sends: a connection carrying one is served first."""

# Request oneof name -> Response class for the same name (both oneofs use the
# same field names; Response additionally has "exception").
_RESPONSE_TYPES: dict[str, type[Message]] = {
    field.name: type(getattr(abci.Response(), field.name))
    for field in abci.Request.DESCRIPTOR.oneofs_by_name["value"].fields
}
LENGTH_DELIMITED = 2
"""The protobuf wire type of a message field."""
_RESPONSE_TAGS: dict[str, bytes] = {
    field.name: encode_uvarint(field.number << 3 | LENGTH_DELIMITED) for field in abci.Response.DESCRIPTOR.fields
}
"""Each Response field's key: a Response is the one field set, written here around the answer's own bytes."""


class ProtocolError(Exception):
    """A frame that is not a usable Request; the connection cannot continue."""


class ABCIServer:
    """Serves one ``Application`` to any number of CometBFT socket connections."""

    def __init__(
        self,
        app: Application,
        host: str,
        port: int,
        max_frame: int = DEFAULT_MAX_FRAME,
        workers: Executor | None = None,
        halt_on: tuple[type[Exception], ...] = (),
        observe: Observer | None = None,
    ) -> None:
        """``halt_on``: app exceptions after which the node must stop (``halted`` is set with the reason).
        ``observe``: told of each answered request (none: not timed at all)."""
        self.app = app
        self.observe = observe
        self.workers = workers
        self.halt_on = halt_on
        self.halted = asyncio.Event()
        self.halt_reason = ""
        self.host = host
        self.port = port
        self.max_frame = max_frame
        self._server: asyncio.Server | None = None
        self._stopped = asyncio.Event()
        self._handlers: set[asyncio.Task[None]] = set()
        self._consensus_partial: set[object] = set()
        self._consensus_idle = asyncio.Event()
        self._consensus_idle.set()

    async def start(self) -> None:
        """Bind and listen; ``self.port`` then holds the real port (useful with 0)."""
        self._stopped.clear()
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port, limit=READ_CHUNK)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("ABCI server listening on %s:%d", self.host, self.port)

    async def serve_forever(self) -> None:
        """Serve (starting if needed) until ``stop()`` or task cancellation."""
        if self._server is None:
            await self.start()
        await self._stopped.wait()

    async def stop(self) -> None:
        """Stop listening and close every open connection."""
        if self._server is None:
            return
        self._stopped.set()
        self._server.close()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        peer = writer.get_extra_info("peername")
        log.info("ABCI connection opened from %s", peer)
        try:
            if not self._stopped.is_set():  # accepted just before stop()
                await self._connection_loop(reader, writer, peer)
        except OSError as exc:
            log.warning("ABCI connection %s failed: %s", peer, exc)
        except asyncio.CancelledError:
            # stop() cancels open connections; ending quietly keeps asyncio's stream
            # callback (Python 3.11) from reporting the cancellation as an error.
            pass
        finally:
            self._handlers.discard(task)
            self._mark_partial(task, False)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            log.info("ABCI connection from %s closed", peer)

    async def _connection_loop(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        peer: object,
    ) -> None:
        """Read, answer in order, write each chunk's (or slice's) answers at once; return to close."""
        decoder = FrameDecoder(self.max_frame)
        consensus = False
        while True:
            chunk = await reader.read(READ_CHUNK)
            if not chunk:
                return
            out: list[bytes] = []
            keep_open = True
            try:
                for frame in decoder.feed(chunk):
                    kind, request = _parse(frame)
                    consensus = consensus or kind in CONSENSUS_REQUESTS
                    started = time.perf_counter() if self.observe is not None else 0.0
                    response, keep_open = self._handle_request(kind, request, started)
                    if not isinstance(response, bytes):
                        # A query job: this connection waits for it, the loop does not.
                        response, keep_open = await self._finish_query(response, request, started)
                    out.append(encode_frame(response))
                    if not keep_open:
                        break
                    if not consensus and len(out) == SLICE:
                        await _write(writer, out)
                        out = []
                        await self._defer_to_consensus()
            except (FrameError, ProtocolError) as exc:
                log.error("closing ABCI connection %s: malformed frame: %s", peer, exc)
                keep_open = False
            if consensus:
                self._mark_partial(asyncio.current_task(), keep_open and decoder.buffered > 0)
            await _write(writer, out)
            if not keep_open:
                return

    async def _defer_to_consensus(self) -> None:
        """Let the loop run the other connections, then wait while a consensus request is partly received."""
        await asyncio.sleep(0)
        await self._consensus_idle.wait()

    def _mark_partial(self, connection: object, partial: bool) -> None:
        """Record whether a consensus connection holds part of a request (the rest is on its way)."""
        if partial:
            self._consensus_partial.add(connection)
            self._consensus_idle.clear()
        else:
            self._consensus_partial.discard(connection)
            if not self._consensus_partial:
                self._consensus_idle.set()

    def _handle_request(self, kind: str, request: abci.Request, started: float) -> tuple[bytes | QueryJob, bool]:
        """Answer one request: ``(response_bytes, keep_connection_open)``, or ``(job, True)``
        for a query the app made a job of (see ``_finish_query``); ``started``: when it began, for ``observe``."""
        try:
            if kind == "query":
                result = self.app.begin_query(request.query)
                if callable(result):
                    return result, True
            else:
                result = getattr(self.app, kind)(getattr(request, kind))
            self._observed(kind, request, result, started)
            return _response(kind, result), True
        except Exception as exc:
            if isinstance(exc, self.halt_on):
                self.halt_reason = str(exc)
                self.halted.set()
            return _failure(kind, exc), False

    async def _finish_query(self, job: QueryJob, request: abci.Request, started: float) -> tuple[bytes, bool]:
        """Run a query job on a worker (on the loop without workers) and answer as ``_handle_request``."""
        try:
            result = await run_job(self.workers, job)
            self._observed("query", request, result, started)
            return _response("query", result), True
        except Exception as exc:
            return _failure("query", exc), False

    def _observed(self, kind: str, request: abci.Request, result: Message, started: float) -> None:
        """Tell ``observe``; its failure is logged, never the request's (CometBFT would stop)."""
        if self.observe is None:
            return
        try:
            self.observe(kind, getattr(request, kind), result, time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - metrics must not take consensus down
            log.exception("observing %s failed", kind)


def _parse(frame: bytes) -> tuple[str, abci.Request]:
    """A frame's request and the name of what it asks; ``ProtocolError`` if it is no usable Request."""
    try:
        request = abci.Request.FromString(frame)
    except DecodeError as exc:
        raise ProtocolError(f"undecodable Request ({len(frame)} bytes)") from exc
    kind = request.WhichOneof("value")
    if kind is None:
        raise ProtocolError("Request has no value set")
    return kind, request


async def _write(writer: asyncio.StreamWriter, out: list[bytes]) -> None:
    """Send answers in one write and drain: back-pressure, and a Flush among them is really flushed."""
    if out:
        writer.write(b"".join(out))
        await writer.drain()


def _response(kind: str, result: Message) -> bytes:
    expected = _RESPONSE_TYPES[kind]
    if not isinstance(result, expected):
        raise TypeError(f"{kind} returned {type(result).__name__}, expected {expected.__name__}")
    # The bytes abci.Response(**{kind: result}) serializes to, without first copying the answer into it (a
    # block's answer holds every tx's result and events).
    return _RESPONSE_TAGS[kind] + encode_frame(result.SerializeToString())


def _failure(kind: str, exc: Exception) -> bytes:
    """A ``ResponseException``; the caller then closes the connection."""
    log.exception("ABCI application error in %s", kind, exc_info=exc)
    error = abci.ResponseException(error=f"{type(exc).__name__}: {exc}")
    return abci.Response(exception=error).SerializeToString()


def run(app: Application, host: str, port: int) -> None:
    """Serve ``app`` until interrupted (blocking)."""

    async def main() -> None:
        server = ABCIServer(app, host, port)
        await server.start()
        try:
            await server.serve_forever()
        finally:
            await server.stop()

    asyncio.run(main())
