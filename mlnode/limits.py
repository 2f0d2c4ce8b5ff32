"""The request-body limit, enforced before a body is parsed.

Parsing JSON costs about ten times the body in memory (a 60 MB chat body took a node from 608 MB to
1.2 GB before its 400), so a body over the limit never reaches the parser: it is refused with 413 and
OpenAI's error body as soon as its Content-Length says so, or, sent chunked, as soon as what arrived
passes the limit. Memory per request is therefore bounded by the limit, however many arrive at once.
The server reads and drops the rest of a refused body (uvicorn discards a request's body once its
response is complete), so a client that sends everything before reading still gets the 413.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mlnode.errors import request_too_large

BODY_BYTES_PER_TOKEN = 1024
"""A verify body carries, per answer token, its logprob entry and five alternatives: under 500 bytes of
JSON; a chat body at most 6 (a byte escaped as ``\\u00XX``). 1 KiB per context token covers both."""
MIN_BODY_BYTES = 1 << 20
UNKNOWN_CONTEXT_BODY_BYTES = 4 << 20
"""For an upstream, whose context this node does not know: room for a chat of ~128k tokens of text."""


def body_limit(context: int | None) -> int:
    """The default limit: 1 KiB per token of the model's context, at least 1 MiB."""
    if context is None:
        return UNKNOWN_CONTEXT_BODY_BYTES
    return max(MIN_BODY_BYTES, context * BODY_BYTES_PER_TOKEN)


def declared_length(scope: Scope) -> int | None:
    """The request's Content-Length, if it sent a valid one (the HTTP parser refuses invalid ones)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class BodyLimit:
    """ASGI middleware: reads an HTTP request's body, up to ``max_bytes``, before the app runs, and
    hands it over whole; a longer body is answered 413 without being kept."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left: no one to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replay(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await request_too_large(self.max_bytes).response()(scope, receive, send)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then the connection's own messages (a
    streaming response listens on it for the client leaving)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed
