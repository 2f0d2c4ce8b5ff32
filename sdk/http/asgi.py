"""What a bare ASGI app of this project serves with (the Transfer Agent, a host's executor proxy): the ASGI types,
reading a request body, answering JSON, a file or an ``ApiError``, and the uvicorn settings both are served under.

Bare ASGI rather than a framework: the TA's whole budget is about a millisecond of added latency per request on
a small machine, and a framework's routing, validation and middleware would spend most of it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sdk.http.errors import ApiError

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
JSON = [(b"content-type", b"application/json")]
FILE_CHUNK = 1 << 20
KEEP_ALIVE_S = 30
"""How long the servers keep an idle keep-alive connection open. Clients must drop theirs sooner (the SDK's pool:
``gonka.transport.KEEPALIVE_EXPIRY_S``): a request written to a connection as the server closes it is lost
before any byte of it is read, and the client sees "Server disconnected without sending a response"."""


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body; None if the client left first; 413 past ``limit`` bytes."""
    message = await receive()
    if message["type"] == "http.disconnect":
        return None
    body = message.get("body", b"")
    if not message.get("more_body"):
        if len(body) > limit:
            raise ApiError(413, f"The request body is over {limit} bytes.", code="request_too_large")
        return body
    parts = [body]
    size = len(body)
    while message.get("more_body"):
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        size += len(parts[-1])
        if size > limit:
            raise ApiError(413, f"The request body is over {limit} bytes.", code="request_too_large")
    return b"".join(parts)


async def send_json(send: Send, status: int, document: Any) -> int:
    await send({"type": "http.response.start", "status": status, "headers": JSON})
    await send({"type": "http.response.body", "body": json.dumps(document).encode()})
    return status


async def send_file(send: Send, path: Path) -> None:
    """``path`` with 200, streamed in chunks read off the event loop (files such as model weights are larger than
    any body held in memory); JSON by its name, else octet-stream."""
    loop = asyncio.get_running_loop()
    with path.open("rb") as f:
        size = path.stat().st_size
        content_type = b"application/json" if path.name.endswith(".json") else b"application/octet-stream"
        headers = [(b"content-type", content_type), (b"content-length", str(size).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        while chunk := await loop.run_in_executor(None, f.read, FILE_CHUNK):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def send_error(send: Send, error: ApiError) -> None:
    headers = [*JSON, *((name.encode(), value.encode()) for name, value in error.headers.items())]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": error.body()})


def uvicorn_config(app: Any, host: str, port: int, **options: Any) -> Any:
    """How ``app`` is served on ``host:port``: uvloop and httptools, no access log, no proxy-header rewriting
    (each costs a noticeable share of the TA's per-request budget); ``options`` override (``uvicorn.Config``'s)."""
    import uvicorn

    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "loop": "uvloop",
        "http": "httptools",
        "access_log": False,
        "proxy_headers": False,
        "lifespan": "on",
        "log_level": "warning",
        "backlog": 2048,
        "timeout_keep_alive": KEEP_ALIVE_S,
    }
    settings.update(options)
    return uvicorn.Config(app, **settings)
