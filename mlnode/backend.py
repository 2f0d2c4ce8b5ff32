"""What the HTTP layer needs from whatever produces completions: the local model or an upstream server.

Methods raise ``errors.APIError`` for any failure the client should see; the server renders it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from mlnode.schemas import ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Load, ModelCard


class ChunkStream(Protocol):
    """An admitted streaming request. ``aclose`` frees its capacity and may be called more than once."""

    def __aiter__(self) -> AsyncIterator[ChatCompletionChunk]: ...

    async def aclose(self) -> None: ...


class Backend(Protocol):
    async def start(self) -> None:
        """Called once the event loop runs, before the first request."""

    async def aclose(self) -> None:
        """Called at shutdown; requests still running fail."""

    async def models(self) -> list[ModelCard]: ...

    async def complete(self, request: ChatCompletionRequest) -> ChatCompletion: ...

    async def stream(self, request: ChatCompletionRequest) -> ChunkStream:
        """Admit the request (or raise, e.g. the 429) before any byte of the stream is sent."""

    def load(self) -> Load: ...
