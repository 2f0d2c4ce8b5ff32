"""The Transfer Agent's HTTP API, a bare ASGI app (``agent/README.md`` is its spec).

    POST /v1/chat/completions   signed (agent.auth), checked, routed (agent.router), queued (agent.queue),
                                started on chain (ChainView.start_inference), then forwarded to the ML node
    GET  /v1/models             the chain's model registry, OpenAI's list shape
    GET  /v1/identity           the TA's address, key, chain id, height and the other TAs, signed
    GET  /v1/status             queue, in flight, the nodes and their state
    GET  /metrics               Prometheus text

Bare ASGI rather than a framework (``sdk.http.asgi``): the TA's whole budget is about a millisecond of added
latency per request on a small machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agent.auth import Authenticator, default_seed
from agent.chain import ChainError, StartRequest
from agent.errors import rate_limited, unavailable
from agent.metrics import Metrics
from agent.queue import FeeQueue
from agent.router import NoCapableNode, NodeState, Router
from sdk.client.rpc import RPCError
from sdk.client.signing import sign_document
from sdk.crypto import bech32, secp256k1
from sdk.http.asgi import JSON, Receive, Scope, Send, read_body, send_error, send_json
from sdk.http.errors import ApiError, bad_request, stream_failure_event
from sdk.http.signed import Requester, forward_headers, with_seed
from sdk.http.upstream import Pool, Response, UpstreamError, next_chunk
from x.inference.client import parse_request, parse_terms

log = logging.getLogger("gonka.agent")
T = TypeVar("T")
GONE = 499
"""The status recorded for a client that left before its answer (nginx's convention); never sent."""


class AgentConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    key: secp256k1.PrivateKey
    """The TA's secp256k1 key: its address is what requesters sign for and what signs ``/v1/identity``."""
    chain: Any
    """The ``agent.chain.ChainView`` the TA reads and writes the chain through."""
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, lt=65536)
    denom: str = "ngonka"
    queue_bound: int = Field(256, ge=0)
    queue_timeout_s: float = Field(60.0, gt=0)
    retry_after_s: int = Field(1, ge=0)
    window_old_s: float = Field(50.0, gt=0)
    window_ahead_s: float = Field(20.0, ge=0)
    """The request timestamp's window: the chain's (x/inference ``request_max_age_s`` 60, ``request_max_future_s``
    30) less a 10 s margin, so what the TA admits is inside the chain's window at the block its start lands in
    (that block's time may be seconds after the TA's clock, and lags real time by up to a block)."""
    replay_cache_size: int = Field(1_000_000, ge=1)
    poll_interval_s: float = Field(1.0, gt=0)
    poll_timeout_s: float = Field(1.0, gt=0)
    connect_timeout_s: float = Field(2.0, gt=0)
    upstream_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for a node's first answer bytes, and then between two chunks of a stream."""
    max_attempts: int = Field(3, ge=1)
    """Nodes a request may be sent to, when the earlier ones fail before answering."""
    default_max_tokens: int = Field(256, ge=1)
    max_body_bytes: int = Field(4 << 20, ge=1024)
    offload_chain_calls: bool = False
    """Run ChainView calls on a worker thread (for a view that does network I/O)."""
    chain_retry_s: float = Field(15.0, ge=0)
    """How long a request's chain calls (the requester's balance, the start) are tried again while the TA's node
    does not answer (it is restarting), before the client gets 503 ``chain_unavailable`` (and fails over)."""


class _Retry(Exception):
    """The node failed before a byte reached the client: the request may go to another node. ``release``: the
    host's ``X-Release`` (its key and signature giving the inference up), b"" when it gave none."""

    def __init__(self, release: bytes = b"") -> None:
        super().__init__()
        self.release = release


class _Unpaid(Exception):
    """The host refused the request as unpaid (its start did not land for it: another host has the inference).
    ``body``: its error body, relayed when no host the chain names answers instead."""

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self.body = body


def is_unpaid(response: Response, data: bytes) -> bool:
    if response.status != 402:
        return False
    try:
        return json.loads(data)["error"]["code"] == "unpaid"
    except (ValueError, KeyError, TypeError):
        return False


def release_of(response: Response) -> bytes:
    try:
        release = bytes.fromhex(response.headers.get("x-release", ""))
    except ValueError:
        return b""
    return release if len(release) == 33 + 64 else b""


def chain_error(error: ChainError) -> ApiError:
    status, kind = {"insufficient_funds": (402, "insufficient_funds"),
                    "already_exists": (409, "invalid_request_error")}.get(error.reason, (400, "invalid_request_error"))
    return ApiError(status, f"The chain refused the inference: {error}", kind, error.reason)


class Agent:
    """The ASGI app; ``await agent.start()`` / ``stop()`` run by the ASGI lifespan (or by hand)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.chain = config.chain
        self.key = config.key
        self.pubkey = config.key.public_key
        self.address_bytes = secp256k1.address_bytes(self.pubkey)
        self.address = bech32.encode(self.address_bytes)
        self.auth = Authenticator(self.address_bytes, config.window_old_s, config.window_ahead_s,
                                  config.replay_cache_size)
        self.router = Router(lambda url: Pool(url, config.connect_timeout_s))
        self.queue = FeeQueue(self.router, config.queue_bound)
        self.metrics = Metrics()
        self.in_flight = 0
        self._poller: asyncio.Task[None] | None = None
        self.routes: dict[tuple[str, str], Callable[[Scope, Receive, Send], Awaitable[int]]] = {
            ("POST", "/v1/chat/completions"): self.chat, ("GET", "/v1/models"): self.models,
            ("GET", "/v1/identity"): self.identity, ("GET", "/v1/status"): self.status,
            ("GET", "/metrics"): self.prometheus}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.refresh()
        await self.poll_nodes()
        self._poller = asyncio.create_task(self._poll_loop())

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            try:
                await self._poller
            except asyncio.CancelledError:
                pass
        for state in self.router.nodes.values():
            state.pool.close()

    async def _chain(self, method: Callable[..., T], *args: Any) -> T:
        if self.config.offload_chain_calls:
            return await asyncio.to_thread(method, *args)
        return method(*args)

    async def _chain_retrying(self, method: Callable[..., T], *args: Any) -> T:
        """``_chain``, tried again while the node does not answer (``RPCError``: restarting, say) for up to
        ``chain_retry_s``; then 503 ``chain_unavailable``, never a refusal the chain did not make."""
        deadline = time.monotonic() + self.config.chain_retry_s
        pause = 0.05
        while True:
            try:
                return await self._chain(method, *args)
            except RPCError as error:
                if time.monotonic() >= deadline:
                    raise ApiError(503, f"The TA's chain node does not answer: {error}", "server_error",
                                   "chain_unavailable") from None
                self.metrics.chain_retries += 1
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)

    async def refresh(self) -> None:
        """Re-read the chain's registry: models, and the nodes registered for each."""
        models = await self._chain(self.chain.models)
        nodes = {model.id: await self._chain(self.chain.nodes, model.id) for model in models}
        self.router.update(models, lambda model_id: nodes.get(model_id, []))

    async def poll_nodes(self) -> None:
        await asyncio.gather(*(self._poll(state) for state in list(self.router.nodes.values())))
        self.queue.drain()

    async def _poll(self, state: NodeState) -> None:
        timeout = self.config.poll_timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await state.pool.request("GET", "/v1/node/info", timeout_s=timeout)
                info = json.loads(await response.read())
            if response.status != 200 or not isinstance(info, dict):
                raise ValueError(f"HTTP {response.status}")
        except (UpstreamError, TimeoutError, ValueError) as error:
            if state.alive:
                log.warning("ML node %s failed its poll: %s", state.node.url, error)
            self.router.mark_dead(state, f"poll: {error}")
            return
        self.router.observe(state, info)

    async def _poll_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.poll_interval_s)
            try:
                await self.refresh()
            except Exception:  # the chain may be briefly unreachable; the last registry stands
                log.exception("reading the registry from the chain failed")
            await self.poll_nodes()

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            handler = self.routes.get((scope["method"], scope["path"]))
            if handler is None:
                known = any(path == scope["path"] for _, path in self.routes)
                error = ApiError(405 if known else 404, f"Invalid URL ({scope['method']} {scope['path']})")
                await send_error(send, error)
                return
            await handler(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()
        try:
            await self.start()
        except Exception as error:
            await send({"type": "lifespan.startup.failed", "message": repr(error)})
            return
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await self.stop()
        await send({"type": "lifespan.shutdown.complete"})

    # ------------------------------------------------------------------ chat

    async def chat(self, scope: Scope, receive: Receive, send: Send) -> int:
        started = time.perf_counter()
        try:
            status = await self._chat(scope, receive, send)
        except ApiError as error:
            status = error.status
            await send_error(send, error)
        except Exception:
            log.exception("chat completion failed")
            status = 500
            await send_error(send, ApiError(500, "The Transfer Agent failed.", "server_error"))
        self.metrics.observe(status, time.perf_counter() - started)
        return status

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> int:
        body = await read_body(receive, self.config.max_body_bytes)
        if body is None:
            return GONE
        headers = dict(scope["headers"])
        requester = self.auth.check(headers, body, time.time_ns())
        return await self._serve(requester, headers, body, receive, send)

    async def _serve(self, requester: Requester, headers: dict[bytes, bytes], body: bytes, receive: Receive,
                     send: Send) -> int:
        """Everything after the signature; a request refused before the chain started it frees its id."""
        config = self.config
        started = False
        state: NodeState | None = None
        try:
            terms = parse_terms(parse_request(body))
            model = self.router.models.get(terms.model)
            if model is None:
                raise ApiError(404, f"The model '{terms.model}' does not exist or you do not have access to it.",
                               "invalid_request_error", "model_not_found", "model")
            model_id = model.id
            max_tokens = config.default_max_tokens if terms.max_tokens is None else terms.max_tokens
            if max_tokens > model.context_length:
                raise bad_request(f"max_tokens {max_tokens} is over the model's context of {model.context_length}.",
                                  terms.max_tokens_param, "context_length_exceeded")
            fee_value = terms.fee_per_token
            if fee_value is None and b"x-fee-per-token" in headers:
                try:
                    fee_value = int(headers[b"x-fee-per-token"])
                except ValueError:
                    raise bad_request("X-Fee-Per-Token must be an integer.", "fee_per_token") from None
                if fee_value < 1:
                    raise bad_request("X-Fee-Per-Token must be a positive integer.", "fee_per_token")
            fee = model.price_per_token if fee_value is None else fee_value
            if fee < model.price_per_token:
                raise bad_request(f"fee_per_token {fee} is below the model's price of {model.price_per_token}.",
                                  "fee_per_token", "fee_too_low")
            stream = terms.stream
            seed = terms.seed
            forward = body
            added: int | None = None
            if seed is None:
                seed = added = default_seed(requester.inference_id)  # below 2**53, exact in JSON
                forward = with_seed(body, seed)  # the host's executor takes it out again to check the signature
            params_hash = terms.params_hash(max_tokens, seed)
            spendable = await self._chain_retrying(self.chain.spendable, requester.address, config.denom)
            if spendable < max_tokens * fee:
                raise ApiError(402, f"{requester.address} can spend {spendable}{config.denom}; this request may "
                                      f"cost up to {max_tokens * fee}{config.denom} ({max_tokens} tokens × "
                                      f"{fee}).", "insufficient_funds", "insufficient_funds")
            state = await self.acquire(model_id, fee, frozenset(), receive)
            if state is None:
                return GONE
            executor: str | None = None
            start_tx = release = b""
            tried: set[tuple[str, str]] = set()
            while True:
                if state.node.operator != executor:
                    start = StartRequest(
                        requester.inference_id, requester.address, requester.pubkey, requester.signature,
                        requester.body_hash, requester.timestamp_ns, self.address, model_id, max_tokens, fee,
                        state.node.operator, state.node.node_id, seed, params_hash, reassign=executor is not None,
                        release=release)
                    try:
                        start_tx = await self._chain_retrying(self.chain.start_inference, start) or b""
                    except ChainError as error:
                        if error.reason == "already_exists" and executor is None:
                            answered = await self.answer_again(requester, forward, added, send)
                            if answered is not None:
                                self.release(state)
                                state = None
                                return answered
                        raise chain_error(error) from None
                    executor = state.node.operator
                    started = True
                self.in_flight += 1
                try:
                    return await self.forward(state, forward, stream, requester.inference_id, receive, send,
                                              forward_headers(requester, self.address, added, start_tx))
                except _Unpaid as unpaid:  # a client's failover raced its first TA's start: that host has it
                    answered = await self.answer_again(requester, forward, added, send)
                    if answered is not None:
                        return answered
                    await send({"type": "http.response.start", "status": 402, "headers": JSON})
                    await send({"type": "http.response.body", "body": unpaid.body})
                    return 402
                except _Retry as retry:
                    release = retry.release
                    tried.add(state.key)
                    if len(tried) >= config.max_attempts:
                        raise ApiError(502, "The ML nodes failed before answering.", "server_error",
                                       "upstream_failed") from None
                    self.metrics.retries += 1
                finally:
                    self.in_flight -= 1
                    self.release(state)
                    state = None
                state = await self.acquire(model_id, fee, frozenset(tried), receive)
                if state is None:
                    return GONE
        except BaseException:
            if state is not None:
                self.release(state)
            if not started:
                self.auth.release(requester)
            raise

    async def answer_again(self, requester: Requester, body: bytes, seed: int | None, send: Send) -> int | None:
        """A request the chain has already (its client failed over from another TA): the same signed request to
        the host the chain names, which serves it once: the answer it kept when it finished it, or the answer
        itself when it is still the executor (``host/proxy.py``, ``one_answer``); None when the chain names
        no host or no node of that host answers (then 409)."""
        executor = await self._chain(self.chain.executor_of, requester.inference_id)
        headers = forward_headers(requester, self.address, seed)
        hosts = [s for s in self.router.nodes.values() if s.node.operator == executor]
        for state in sorted(hosts, key=lambda s: not s.alive):  # a missed poll is no reason not to ask it
            try:
                async with asyncio.timeout(self.config.upstream_timeout_s):
                    response = await state.pool.request("POST", "/v1/chat/completions", body, timeout_s=None,
                                                        extra_headers=headers)
                    data = await response.read()
            except (UpstreamError, TimeoutError):
                continue
            if response.status != 200:
                continue
            content_type = response.headers.get("content-type", "application/json").encode()
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", content_type), (b"x-inference-id", requester.inference_id.hex().encode())]})
            await send({"type": "http.response.body", "body": data})
            self.metrics.answered_again += 1
            return 200
        return None

    def release(self, state: NodeState) -> None:
        state.local -= 1
        if self.queue.waiting:
            self.queue.drain()

    async def acquire(self, model: str, fee: int, exclude: frozenset[tuple[str, str]],
                      receive: Receive) -> NodeState | None:
        """A slot on a node (its local count taken), waiting in the queue if need be; None if the client left."""
        try:
            if not self.queue.has_waiters(model):
                state = self.router.pick(model, exclude)
                if state is not None:
                    state.local += 1
                    return state
            else:
                self.router.pick(model, exclude)  # only to refuse at once when no live node serves the model
        except NoCapableNode:
            raise unavailable(f"No live ML node serves {model!r}.") from None
        waiter = self.queue.push(model, fee, exclude)
        if waiter is None:
            raise rate_limited(f"Every node serving {model!r} is busy and the queue is full "
                               f"({self.queue.bound} waiting).", self.config.retry_after_s)
        self.queue.drain()
        if waiter.future.done():
            return waiter.future.result()
        gone = asyncio.ensure_future(receive())
        try:
            await asyncio.wait((waiter.future, gone), timeout=self.config.queue_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not gone.done():
                gone.cancel()
        if waiter.future.done() and not waiter.future.cancelled():
            if gone.done() and not gone.cancelled():
                if waiter.future.exception() is None:
                    self.release(waiter.future.result())
                return None
            return waiter.future.result()
        self.queue.leave(waiter)
        waiter.future.cancel()
        if gone.done() and not gone.cancelled():
            return None
        raise rate_limited(f"Waited {self.config.queue_timeout_s} s in the queue for {model!r}.",
                           self.config.retry_after_s)

    async def forward(self, state: NodeState, body: bytes, stream: bool, inference: bytes, receive: Receive,
                      send: Send, headers: bytes = b"") -> int:
        """Send to the node (with ``headers``: the signed request's, for the host's executor proxy) and relay its
        answer; ``_Retry`` if it fails before a byte reached the client.

        One timeout covers the node's whole answer, or a stream's first event (one timer per request: they
        cost a noticeable share of the TA's budget)."""
        response: Response | None = None
        first = data = b""
        try:
            async with asyncio.timeout(self.config.upstream_timeout_s):
                response = await state.pool.request("POST", "/v1/chat/completions", body, timeout_s=None,
                                                    extra_headers=headers)
                if response.status >= 500 or response.status == 429:
                    response.close()  # failed or full (other TAs' load) before answering: try another node
                    raise _Retry(release_of(response))
                streaming = stream and response.status == 200
                if streaming:
                    chunks = response.chunks()
                    first = await anext(chunks)
                else:
                    data = await response.read()
        except (UpstreamError, TimeoutError, StopAsyncIteration) as error:
            if response is not None:
                response.close()
            self.router.mark_dead(state, str(error) or repr(error))
            raise _Retry() from None
        extra = (b"x-inference-id", inference.hex().encode())
        if not streaming:
            if is_unpaid(response, data):
                raise _Unpaid(data)
            content_type = response.headers.get("content-type", "application/json").encode()
            await send({"type": "http.response.start", "status": response.status,
                        "headers": [(b"content-type", content_type), extra]})
            await send({"type": "http.response.body", "body": data})
            return response.status
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), extra]})
        await send({"type": "http.response.body", "body": first, "more_body": True})
        return await self._relay(state, response, chunks, receive, send)

    async def _relay(self, state: NodeState, response: Response, chunks: AsyncIterator[bytes], receive: Receive,
                     send: Send) -> int:
        """The rest of a stream, after its first event reached the client."""
        timeout = self.config.upstream_timeout_s
        gone = asyncio.ensure_future(receive())
        try:
            while True:
                try:
                    chunk = await next_chunk(chunks, timeout)
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

    # ------------------------------------------------------------------ the other routes

    async def models(self, scope: Scope, receive: Receive, send: Send) -> int:
        models = await self._chain(self.chain.models)
        data = [{"id": m.id, "object": "model", "created": 0, "owned_by": "gonka", "context_length": m.context_length,
                 "price_per_token": m.price_per_token} for m in models]
        return await send_json(send, 200, {"object": "list", "data": data})

    def identity_document(self) -> dict[str, Any]:
        document = {"address": self.address, "pubkey": self.pubkey.hex(), "chain_id": self.chain.chain_id(),
                    "latest_height": self.chain.latest_height(), "tas": list(self.chain.tas()),
                    "time_ns": time.time_ns()}
        return sign_document(self.key, document)

    async def identity(self, scope: Scope, receive: Receive, send: Send) -> int:
        if self.config.offload_chain_calls:
            return await send_json(send, 200, await asyncio.to_thread(self.identity_document))
        return await send_json(send, 200, self.identity_document())

    def status_document(self) -> dict[str, Any]:
        return {"address": self.address, "queue": len(self.queue), "queue_bound": self.queue.bound,
                "in_flight": self.in_flight, "nodes": [s.describe() for s in self.router.nodes.values()]}

    async def status(self, scope: Scope, receive: Receive, send: Send) -> int:
        return await send_json(send, 200, self.status_document())

    async def prometheus(self, scope: Scope, receive: Receive, send: Send) -> int:
        text = self.metrics.render(len(self.queue), self.in_flight, self.router.nodes.values())
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")]})
        await send({"type": "http.response.body", "body": text})
        return 200
