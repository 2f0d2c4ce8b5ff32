"""The REST API: a bare ASGI app under uvicorn on the node's event loop, answering the gRPC server's handlers.

Like the gRPC server (sdk/grpc/server.py) it runs on the loop that serves ABCI and calls the same handlers
in process: a module query or a simulation runs on the query workers over a snapshot of the committed
state, so a REST call never sees half a block nor holds up consensus. An answer too big to print in a
moment is printed to JSON on a worker too. A body over ``max_body_bytes`` is refused by its
Content-Length, before any of it is read. ``GET /`` and ``GET /web/<name>`` serve the files of
``static_dir`` when there is one (the network page).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import re
import socket
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from functools import partial
from pathlib import Path

import grpc
import uvicorn

from sdk.grpc.methods import ContextMethods
from sdk.grpc.server import HEIGHT_HEADER, failure_status
from sdk.http.asgi import Receive, Scope, Send, uvicorn_config
from sdk.rest.request import BadInput, build_request
from sdk.rest.response import error_json, http_status, message_json
from sdk.rest.routes import Route, build_routes, find_route
from sdk.workers import run_job

log = logging.getLogger("gonkad.rest")

PRINT_ON_LOOP_BYTES = 16 * 1024
"""Answers up to this size (protobuf bytes) print on the loop: a hop to a worker would cost more."""
STOP_GRACE_S = 2.0
_JSON = (b"content-type", b"application/json")
_CLOSE = [(b"connection", b"close")]
"""Sent with a refused body: the connection closes instead of draining the rest of it."""
_STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_RESPONSE_HEADER = ("grpc-metadata-" + HEIGHT_HEADER).encode()
"""How grpc-gateway hands a gRPC answer's metadata to the HTTP client."""


class _BodyTooLarge(Exception):
    pass


class RestContext:
    """The gRPC call context the handlers read, made from an HTTP request: ``x-cosmos-block-height`` is passed
    on as the SDK's gateway passes it, and the height that answered comes back as a response header."""

    def __init__(self, headers: Sequence[tuple[bytes, bytes]]) -> None:
        name = HEIGHT_HEADER.encode()
        self.metadata = [(HEIGHT_HEADER, value.decode("latin-1")) for key, value in headers if key.lower() == name]
        self.sent: list[tuple[str, str]] = []

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        return self.metadata

    async def send_initial_metadata(self, metadata: Sequence[tuple[str, str]]) -> None:
        self.sent.extend(metadata)


class Gateway:
    """The ASGI app: routes from the served services' ``google.api.http`` rules (sdk/rest/routes.py)."""

    def __init__(
        self,
        services: dict[str, ContextMethods],
        max_body_bytes: int,
        workers: Executor | None = None,
        static_dir: Path | None = None,
    ) -> None:
        self.routes = build_routes(services)
        self.workers = workers
        self.max_body_bytes = max_body_bytes
        self.static_dir = static_dir

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        length = _content_length(scope["headers"])
        if length is None:
            return await _send(send, 400, error_json(grpc.StatusCode.INVALID_ARGUMENT, "malformed Content-Length"))
        if length > self.max_body_bytes:
            message = f"request body of {length} bytes is over the limit of {self.max_body_bytes}"
            return await _send(send, 413, error_json(grpc.StatusCode.RESOURCE_EXHAUSTED, message), _CLOSE)
        if scope["method"] == "GET" and self.static_dir is not None and (path == "/" or path.startswith("/web/")):
            return await self._static(send, "index.html" if path == "/" else path[len("/web/") :])
        found = find_route(self.routes, scope["method"], path)
        if found is None:
            return await _send(send, 501, error_json(grpc.StatusCode.UNIMPLEMENTED, "Not Implemented"))
        route, values = found
        try:
            body = await self._body(receive) if route.body else b""
        except _BodyTooLarge:
            message = f"request body over the limit of {self.max_body_bytes} bytes"
            return await _send(send, 413, error_json(grpc.StatusCode.RESOURCE_EXHAUSTED, message), _CLOSE)
        if body is None:
            return  # the client left
        await self._call(send, route, values, scope["query_string"], body, scope["headers"])

    async def _call(
        self,
        send: Send,
        route: Route,
        values: dict[str, str],
        query: bytes,
        body: bytes,
        headers: Sequence[tuple[bytes, bytes]],
    ) -> None:
        context = RestContext(headers)
        try:
            request = build_request(route, values, query, body)
            answer = await route.handler(request, context)
            if answer.ByteSize() <= PRINT_ON_LOOP_BYTES:
                printed = message_json(answer)
            else:
                printed = await run_job(self.workers, partial(message_json, answer))
        except BadInput as err:
            return await _send(send, 400, error_json(grpc.StatusCode.INVALID_ARGUMENT, str(err)))
        except Exception as exc:  # noqa: BLE001 - one failing call must not take the server down
            code, message = failure_status(exc, f"{route.verb} {route.path.template}")
            return await _send(send, http_status(code), error_json(code, message))
        extra = [(_RESPONSE_HEADER, value.encode()) for key, value in context.sent if key == HEIGHT_HEADER]
        await _send(send, 200, printed, extra)

    async def _body(self, receive: Receive) -> bytes | None:
        """The body (None if the client left); ``_BodyTooLarge`` past the limit (a chunked body names no length
        up front)."""
        parts: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > self.max_body_bytes:
                raise _BodyTooLarge
            more = message.get("more_body", False)
        return b"".join(parts)

    async def _static(self, send: Send, name: str) -> None:
        assert self.static_dir is not None
        file = self.static_dir / name
        if not _STATIC_NAME.fullmatch(name) or not file.is_file():
            return await _send(send, 404, error_json(grpc.StatusCode.NOT_FOUND, "Not Found"))
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        await _send(send, 200, file.read_bytes(), content_type=kind.encode())


def _content_length(headers: Sequence[tuple[bytes, bytes]]) -> int | None:
    """The declared body size (0 without one); None if it is not a number."""
    for key, value in headers:
        if key.lower() == b"content-length":
            return int(value) if value.isdigit() else None
    return 0


async def _send(
    send: Send,
    status: int,
    body: bytes,
    headers: Sequence[tuple[bytes, bytes]] = (),
    content_type: bytes = _JSON[1],
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", b"%d" % len(body)), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


def listen_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket made with its protocol named: asyncio sets TCP_NODELAY only on connections of such
    a socket, and without it an answer written as head then body waits out the client's delayed ACK (~40 ms)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server without its signal handlers: the node owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class RESTServer:
    """Serves ``services`` (the gRPC server's, ``GRPCServer.services()``) over HTTP on ``host:port`` (port 0 picks
    one, see ``port``); ``workers`` as the gRPC server's."""

    def __init__(
        self,
        services: dict[str, ContextMethods],
        host: str,
        port: int,
        max_body_bytes: int,
        workers: Executor | None = None,
        static_dir: Path | None = None,
    ) -> None:
        self.gateway = Gateway(services, max_body_bytes, workers, static_dir)
        self.host = host
        self.port = port
        self._task: asyncio.Task[None] | None = None
        self._server: _Server | None = None

    async def start(self) -> None:
        """Bind (an OSError if the port is taken) and serve on the running loop."""
        sock = listen_tcp(self.host, self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn_config(self.gateway, self.host, self.port, lifespan="off")
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()
        log.info(
            "REST server on http://%s:%d: %d routes", self.host, self.port, sum(map(len, self.gateway.routes.values()))
        )

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._task, STOP_GRACE_S + 1)
            self._server = self._task = None
