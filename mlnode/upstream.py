"""A backend that fronts another OpenAI-compatible server (vLLM on a GPU host, or another ML node).

Requests are forwarded with the seed this node chose, answers and logprobs come back unchanged except
for the added ``seed``, and upstream errors are re-shaped into OpenAI's error body. The same capacity
rule as the local engine applies: ``max_concurrency`` requests upstream at once, ``max_queue`` waiting.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from pydantic import ValidationError

from mlnode.errors import APIError, model_not_found, over_capacity, server_error
from mlnode.schemas import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ErrorDetail,
    Load,
    ModelCard,
    ModelList,
)


class ConcurrencyGate:
    """Counts requests against ``max_concurrency`` running plus ``max_queue`` waiting for a turn."""

    def __init__(self, max_concurrency: int, max_queue: int) -> None:
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self._turns = asyncio.Semaphore(max_concurrency)
        self._admitted = 0
        self._running = 0

    async def enter(self) -> None:
        if self._admitted >= self.max_concurrency + self.max_queue:
            raise over_capacity()
        self._admitted += 1
        try:
            await self._turns.acquire()
        except BaseException:
            self._admitted -= 1
            raise
        self._running += 1

    def leave(self) -> None:
        self._running -= 1
        self._admitted -= 1
        self._turns.release()

    def load(self) -> Load:
        return Load(
            in_flight=self._running,
            queued=self._admitted - self._running,
            max_concurrency=self.max_concurrency,
            max_queue=self.max_queue,
        )


def upstream_error(status: int, payload: Any, text: str) -> APIError:
    """OpenAI's ``{"error": {...}}``, vLLM's older flat error, or anything else, as our error body."""
    detail = payload.get("error", payload) if isinstance(payload, dict) else None
    try:
        parsed = ErrorDetail.model_validate(detail)
    except ValidationError:
        parsed = ErrorDetail(
            message=f"The upstream answered HTTP {status}: {text[:200]}",
            type="server_error" if status >= 500 else "invalid_request_error",
        )
    return APIError(status, parsed)


def _response_error(response: httpx.Response) -> APIError:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    error = upstream_error(response.status_code, payload, response.text)
    if "retry-after" in response.headers:
        error.headers["Retry-After"] = response.headers["retry-after"]
    return error


@contextmanager
def _relayed() -> Iterator[None]:
    """Transport failures and malformed answers of the upstream, as 502/504 errors of this node."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise server_error(f"The upstream timed out: {exc!r}", 504) from exc
    except httpx.HTTPError as exc:
        raise server_error(f"The upstream is unreachable: {exc!r}", 502) from exc
    except (ValueError, TypeError) as exc:
        raise server_error(f"The upstream sent a malformed answer: {exc}", 502) from exc


class UpstreamStream:
    """Relays the upstream's server-sent events chunk by chunk; closing it closes the upstream stream."""

    def __init__(self, response: httpx.Response, seed: int, admission: ConcurrencyGate) -> None:
        self._response = response
        self._seed = seed
        self._admission = admission
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[ChatCompletionChunk]:
        with _relayed():
            async for line in self._response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line.removeprefix("data:").strip()
                if data == "[DONE]":
                    return
                body = json.loads(data)
                if "error" in body:
                    raise upstream_error(500, body, data)
                yield ChatCompletionChunk.model_validate({**body, "seed": self._seed})

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._response.aclose()
            self._admission.leave()


class UpstreamBackend:
    def __init__(
        self, url: str, max_concurrency: int, max_queue: int, model: str | None = None, timeout_s: float = 600.0
    ) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")
        self.model = model
        """When set, the one upstream model this node offers."""
        self.admission = ConcurrencyGate(max_concurrency, max_queue)
        self.client = httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(timeout_s, connect=10.0))

    async def start(self) -> None:
        """Nothing to prepare: connections open on first use."""

    async def aclose(self) -> None:
        await self.client.aclose()

    def load(self) -> Load:
        return self.admission.load()

    async def models(self) -> list[ModelCard]:
        with _relayed():
            response = await self.client.get("/v1/models")
            if response.is_error:
                raise _response_error(response)
            cards = ModelList.model_validate(response.json()).data
        return [card for card in cards if self.model is None or card.id == self.model]

    def _payload(self, request: ChatCompletionRequest) -> dict[str, Any]:
        if self.model is not None and request.model != self.model:
            raise model_not_found(request.model)
        return request.model_dump(mode="json", exclude_none=True)

    async def complete(self, request: ChatCompletionRequest) -> ChatCompletion:
        payload = self._payload(request)
        await self.admission.enter()
        try:
            with _relayed():
                response = await self.client.post("/v1/chat/completions", json=payload)
                if response.is_error:
                    raise _response_error(response)
                return ChatCompletion.model_validate({**response.json(), "seed": request.seed})
        finally:
            self.admission.leave()

    async def stream(self, request: ChatCompletionRequest) -> UpstreamStream:
        payload = self._payload(request)
        await self.admission.enter()
        try:
            with _relayed():
                response = await self.client.send(
                    self.client.build_request("POST", "/v1/chat/completions", json=payload), stream=True
                )
                if response.is_error:
                    await response.aread()
                    await response.aclose()
                    raise _response_error(response)
        except BaseException:
            self.admission.leave()
            raise
        return UpstreamStream(response, request.seed, self.admission)
