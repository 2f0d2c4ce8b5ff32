"""The exchange with a host: a request sent to its executor proxy (in front of its ML node), the answer relayed.

What a node's failure before the first byte reached the client comes to is a value: ``Retry`` (the failover
loop sends the request to another node), or ``Unpaid`` for the host's 402 ``unpaid`` (another host has the
inference). Once the first byte went out there is no retry: a stream whose node fails ends with an error event.

One timeout covers the node's whole answer, or a stream's first event, and then each wait between two chunks
(one timer per request: they cost a noticeable share of the TA's budget).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from agent.request import GONE, ChatRequest, Retry, Unpaid
from agent.router import NodeState, Router
from sdk.http.asgi import Receive, Send
from sdk.http.errors import stream_failure_event
from sdk.http.upstream import Response, UpstreamError, next_chunk

PATH = "/v1/chat/completions"


class Forwarder:
    """Requests to the router's nodes; a node that fails is marked dead there."""

    def __init__(self, router: Router, timeout_s: float) -> None:
        self.router = router
        self.timeout_s = timeout_s

    async def forward(
        self, state: NodeState, request: ChatRequest, headers: bytes, receive: Receive, send: Send
    ) -> int | Retry | Unpaid:
        """Send to the node (with ``headers``: the signed request's, for the host's executor proxy) and relay its
        answer; a node that does not answer is marked dead."""
        response: Response | None = None
        first = data = b""
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await state.pool.request("POST", PATH, request.body, timeout_s=None, extra_headers=headers)
                if response.status >= 500 or response.status == 429:
                    response.close()  # failed or full (other TAs' load) before answering: try another node
                    return Retry(release_of(response))
                streaming = request.stream and response.status == 200
                if streaming:
                    chunks = response.chunks()
                    first = await anext(chunks)
                else:
                    data = await response.read()
        except (UpstreamError, TimeoutError, StopAsyncIteration) as error:
            if response is not None:
                response.close()
            self.router.mark_dead(state, str(error) or repr(error))
            return Retry()
        inference = request.requester.inference_id
        if not streaming:
            if is_unpaid(response, data):
                return Unpaid(data)
            return await send_whole(send, response.status, data, answer_headers(response, inference))
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                    (b"x-inference-id", inference.hex().encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": first, "more_body": True})
        return await self._relay(state, response, chunks, receive, send)

    async def _relay(
        self, state: NodeState, response: Response, chunks: AsyncIterator[bytes], receive: Receive, send: Send
    ) -> int:
        """The rest of a stream, after its first event reached the client."""
        gone = asyncio.ensure_future(receive())
        try:
            while True:
                try:
                    chunk = await next_chunk(chunks, self.timeout_s)
                except (UpstreamError, TimeoutError) as error:
                    response.close()
                    self.router.mark_dead(state, f"stream: {error!r}")
                    await send({"type": "http.response.body", "more_body": True, "body": stream_failure_event()})
                    break
                if chunk is None:
                    break
                if gone.done():
                    response.close()  # the client left: closing the node's stream frees its slot
                    return GONE
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            if not gone.done():
                gone.cancel()
        return 200

    async def fetch(self, state: NodeState, body: bytes, headers: bytes) -> tuple[Response, bytes] | None:
        """The node's whole answer when it is a 200; None when it fails or answers otherwise."""
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await state.pool.request("POST", PATH, body, timeout_s=None, extra_headers=headers)
                data = await response.read()
        except (UpstreamError, TimeoutError):
            return None
        return (response, data) if response.status == 200 else None


def is_unpaid(response: Response, data: bytes) -> bool:
    """Whether the host refused as unpaid (402 ``unpaid``), not for any other 402 (``terms_mismatch``)."""
    if response.status != 402:
        return False
    try:
        return json.loads(data)["error"]["code"] == "unpaid"
    except (ValueError, KeyError, TypeError):
        return False


def release_of(response: Response) -> bytes:
    """The host's ``X-Release`` (33-byte key ‖ 64-byte signature), b"" when it gave none or a malformed one."""
    try:
        release = bytes.fromhex(response.headers.get("x-release", ""))
    except ValueError:
        return b""
    return release if len(release) == 33 + 64 else b""


def answer_headers(response: Response, inference: bytes) -> list[tuple[bytes, bytes]]:
    """A whole answer's headers: the node's content type, and the inference id."""
    content_type = response.headers.get("content-type", "application/json").encode()
    return [(b"content-type", content_type), (b"x-inference-id", inference.hex().encode())]


async def send_whole(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    """A whole answer to the client, as the host gave it; its status."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
    return status
