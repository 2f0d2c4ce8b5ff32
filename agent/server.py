"""The Transfer Agent's HTTP API, a bare ASGI app (``agent/README.md`` is its spec).

    POST /v1/chat/completions   the stages of agent/pipeline.py: signed (agent.auth), priced (agent.request),
                                admitted to a node (agent.admission), started on chain, forwarded (agent.forward)
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
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from agent.auth import Authenticator
from agent.config import AgentConfig
from agent.metrics import Metrics
from agent.pipeline import ChatPipeline
from agent.queue import FeeQueue
from agent.request import GONE, Outcome
from agent.router import NodeState, Router
from sdk.client.signing import sign_document
from sdk.crypto import bech32, secp256k1
from sdk.http.asgi import Receive, Scope, Send, read_body, send_error, send_json
from sdk.http.errors import ApiError
from sdk.http.upstream import Pool, UpstreamError

log = logging.getLogger("gonka.agent")
T = TypeVar("T")


class Agent:
    """The ASGI app; ``await agent.start()`` / ``stop()`` run by the ASGI lifespan (or by hand)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.chain = config.chain
        self.key = config.key
        self.pubkey = config.key.public_key
        self.address_bytes = secp256k1.address_bytes(self.pubkey)
        self.address = bech32.encode(self.address_bytes)
        self.auth = Authenticator(
            self.address_bytes, config.window_old_s, config.window_ahead_s, config.replay_cache_size
        )
        self.router = Router(lambda url: Pool(url, config.connect_timeout_s))
        self.queue = FeeQueue(self.router, config.queue_bound)
        self.metrics = Metrics()
        self.pipeline = ChatPipeline(
            config, self.address, self.auth, self.router, self.queue, self.metrics, self._chain
        )
        self._poller: asyncio.Task[None] | None = None
        self._threads = ThreadPoolExecutor(config.chain_threads, thread_name_prefix="chain")
        self.routes: dict[tuple[str, str], Callable[[Scope, Receive, Send], Awaitable[int]]] = {
            ("POST", "/v1/chat/completions"): self.chat,
            ("GET", "/v1/models"): self.models,
            ("GET", "/v1/identity"): self.identity,
            ("GET", "/v1/status"): self.status,
            ("GET", "/metrics"): self.prometheus,
        }

    @property
    def in_flight(self) -> int:
        """Requests sent to ML nodes and not yet answered."""
        return self.pipeline.in_flight

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
        self._threads.shutdown(wait=False)

    async def _chain(self, method: Callable[..., T], *args: Any) -> T:
        if self.config.offload_chain_calls:
            return await asyncio.get_running_loop().run_in_executor(self._threads, method, *args)
        return method(*args)

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
        """The pipeline's answer (``agent/pipeline.py``), or its refusal in OpenAI's error body."""
        started = time.perf_counter()
        try:
            outcome = await self._chat(scope, receive, send)
        except Exception:
            log.exception("chat completion failed")
            outcome = ApiError(500, "The Transfer Agent failed.", "server_error")
        if isinstance(outcome, ApiError):
            await send_error(send, outcome)
            outcome = outcome.status
        self.metrics.observe(outcome, time.perf_counter() - started)
        return outcome

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> Outcome:
        try:
            body = await read_body(receive, self.config.max_body_bytes)
        except ApiError as error:  # over max_body_bytes
            return error
        if body is None:
            return GONE
        return await self.pipeline.serve(dict(scope["headers"]), body, receive, send)

    # ------------------------------------------------------------------ the other routes

    async def models(self, scope: Scope, receive: Receive, send: Send) -> int:
        models = await self._chain(self.chain.models)
        data = [
            {
                "id": m.id,
                "object": "model",
                "created": 0,
                "owned_by": "gonka",
                "context_length": m.context_length,
                "price_per_token": m.price_per_token,
            }
            for m in models
        ]
        return await send_json(send, 200, {"object": "list", "data": data})

    def identity_document(self) -> dict[str, Any]:
        document = {
            "address": self.address,
            "pubkey": self.pubkey.hex(),
            "chain_id": self.chain.chain_id(),
            "latest_height": self.chain.latest_height(),
            "tas": list(self.chain.tas()),
            "time_ns": time.time_ns(),
        }
        return sign_document(self.key, document)

    async def identity(self, scope: Scope, receive: Receive, send: Send) -> int:
        return await send_json(send, 200, await self._chain(self.identity_document))

    def status_document(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "queue": len(self.queue),
            "queue_bound": self.queue.bound,
            "in_flight": self.in_flight,
            "nodes": [s.describe() for s in self.router.nodes.values()],
        }

    async def status(self, scope: Scope, receive: Receive, send: Send) -> int:
        return await send_json(send, 200, self.status_document())

    async def prometheus(self, scope: Scope, receive: Receive, send: Send) -> int:
        text = self.metrics.render(len(self.queue), self.in_flight, self.router.nodes.values())
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain; version=0.0.4; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": text})
        return 200
