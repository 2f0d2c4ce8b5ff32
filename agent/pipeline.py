"""A chat completion's path through the TA, as short stages that each give their result or their refusal as a
value (as vLLM's OpenAI server does); ``ChatPipeline.run`` reads top to bottom, the first refusal is the answer.

    authenticate  the four signed-request headers (agent.auth); the inference id reserved        401
    parse         the body, once, into a ChatRequest (agent.request): terms, seed, forwarded body   400
    price         model, max_tokens and fee against the chain's registry: the start's escrow       404, 400
    check_funds   the requester's spendable balance covers the escrow                              402, 503
    admit         a slot on a capable node, at once or after the fee queue (agent.admission)       503, 429, 499
    start         MsgStartInference with the node's host as executor                                402, 409, 400, 503
    forward       to the host's executor proxy, its answer relayed (agent.forward)                  the node's

A node that fails before a byte reached the client (``Retry``) sends the request back to ``admit`` for another
node, up to ``max_attempts`` nodes (then 502); on another host's node ``start`` is the reassignment, with the
failed host's release. A request the chain already has (its client failed over from another TA), or that the
chosen host refuses as ``Unpaid``, is asked of the host the chain names (``answer_again``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from agent.admission import Admission
from agent.auth import Authenticator
from agent.chain import ChainError, StartRequest
from agent.config import AgentConfig
from agent.forward import Forwarder, answer_headers, send_whole
from agent.metrics import Metrics
from agent.queue import FeeQueue
from agent.request import Attempts, ChatRequest, Outcome, Price, Retry, Unpaid
from agent.router import NodeState, Router
from sdk.client.rpc import RPCError
from sdk.http.asgi import Receive, Send
from sdk.http.errors import ApiError
from sdk.http.signed import Requester, forward_headers

T = TypeVar("T")


class ChainCall(Protocol):
    """A ``ChainView`` method called, on a worker thread when the view does network I/O (``Agent._chain``)."""

    def __call__(self, method: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


def chain_error(error: ChainError) -> ApiError:
    """The chain's refusal of a start, for the client: 402 for funds, 409 for an id it has, else 400."""
    status, kind = {
        "insufficient_funds": (402, "insufficient_funds"),
        "already_exists": (409, "invalid_request_error"),
    }.get(error.reason, (400, "invalid_request_error"))
    return ApiError(status, f"The chain refused the inference: {error}", kind, error.reason)


class ChatPipeline:
    """``POST /v1/chat/completions`` once its body is read; ``in_flight`` counts requests sent to nodes."""

    def __init__(
        self,
        config: AgentConfig,
        address: str,
        auth: Authenticator,
        router: Router,
        queue: FeeQueue,
        metrics: Metrics,
        call: ChainCall,
    ) -> None:
        self.config = config
        self.chain = config.chain
        self.address = address
        self.auth = auth
        self.router = router
        self.metrics = metrics
        self.call = call
        self.admission = Admission(router, queue, config.queue_timeout_s, config.retry_after_s)
        self.forwarder = Forwarder(router, config.upstream_timeout_s)
        self.in_flight = 0

    async def serve(self, headers: dict[bytes, bytes], body: bytes, receive: Receive, send: Send) -> Outcome:
        """A request refused before the chain started it frees its id, so the requester may send it again (once
        the queue has room, say)."""
        requester = self.authenticate(headers, body)
        if isinstance(requester, ApiError):
            return requester
        attempts = Attempts()
        outcome: Outcome | None = None
        try:
            outcome = await self.run(requester, headers, body, attempts, receive, send)
            return outcome
        finally:
            if attempts.executor is None and not isinstance(outcome, int):
                self.auth.release(requester)

    async def run(
        self,
        requester: Requester,
        headers: dict[bytes, bytes],
        body: bytes,
        attempts: Attempts,
        receive: Receive,
        send: Send,
    ) -> Outcome:
        request = ChatRequest.parse(requester, headers, body)
        if isinstance(request, ApiError):
            return request
        price = Price.of(request, self.router.models, self.config.default_max_tokens)
        if isinstance(price, ApiError):
            return price
        refusal = await self.check_funds(request, price)
        if refusal is not None:
            return refusal
        while True:
            state = await self.admission.acquire(price.model, price.fee, frozenset(attempts.tried), receive)
            if not isinstance(state, NodeState):
                return state
            try:
                outcome = await self.attempt(request, price, state, attempts, receive, send)
            finally:
                self.admission.release(state)
            if isinstance(outcome, Unpaid):
                return await self.relay_unpaid(request, outcome, send)
            if not isinstance(outcome, Retry):
                return outcome
            refusal = self.failed(attempts, state, outcome)
            if refusal is not None:
                return refusal

    # ------------------------------------------------------------------ the stages

    def authenticate(self, headers: dict[bytes, bytes], body: bytes) -> Requester | ApiError:
        try:
            return self.auth.check(headers, body, time.time_ns())
        except ApiError as error:
            return error

    async def check_funds(self, request: ChatRequest, price: Price) -> ApiError | None:
        """402 unless the requester can spend the escrow now (its start would be refused in its block)."""
        address, denom = request.requester.address, self.config.denom
        spendable = await self.chain_retrying(self.chain.spendable, address, denom)
        if isinstance(spendable, ApiError):
            return spendable
        if spendable >= price.escrow:
            return None
        return ApiError(
            402,
            f"{address} can spend {spendable}{denom}; this request may cost up to "
            f"{price.escrow}{denom} ({price.max_tokens} tokens × {price.fee}).",
            "insufficient_funds",
            "insufficient_funds",
        )

    async def attempt(
        self, request: ChatRequest, price: Price, state: NodeState, attempts: Attempts, receive: Receive, send: Send
    ) -> Outcome | Retry | Unpaid:
        """One node: the start when its host is not the executor yet (the first, or a reassignment), then forward."""
        if state.node.operator != attempts.executor:
            refusal = await self.start(request, price, state, attempts, send)
            if refusal is not None:
                return refusal
        headers = forward_headers(request.requester, self.address, request.chosen_seed, attempts.start_tx)
        self.in_flight += 1
        try:
            return await self.forwarder.forward(state, request, headers, receive, send)
        finally:
            self.in_flight -= 1

    async def start(
        self, request: ChatRequest, price: Price, state: NodeState, attempts: Attempts, send: Send
    ) -> Outcome | None:
        """MsgStartInference with the node's host as executor, or after another host failed MsgReassignInference
        with its release; None once the chain took it. A request the chain already has is answered by the host
        the chain names, when one does (``answer_again``); otherwise the chain's refusal."""
        requester = request.requester
        reassign = attempts.executor is not None
        start = StartRequest(
            requester.inference_id,
            requester.address,
            requester.pubkey,
            requester.signature,
            requester.body_hash,
            requester.timestamp_ns,
            self.address,
            price.model,
            price.max_tokens,
            price.fee,
            state.node.operator,
            state.node.node_id,
            request.seed,
            price.params_hash,
            reassign=reassign,
            release=attempts.release,
        )
        try:
            start_tx = await self.chain_retrying(self.chain.start_inference, start)
        except ChainError as error:
            if error.reason == "already_exists" and not reassign:
                answered = await self.answer_again(request, send)
                if answered is not None:
                    return answered
            return chain_error(error)
        if isinstance(start_tx, ApiError):
            return start_tx
        attempts.executor, attempts.start_tx = state.node.operator, start_tx or b""
        return None

    def failed(self, attempts: Attempts, state: NodeState, retry: Retry) -> ApiError | None:
        """The node failed before answering: its host's release kept for the next start; 502 once
        ``max_attempts`` nodes have failed."""
        attempts.release = retry.release
        attempts.tried.add(state.key)
        if len(attempts.tried) >= self.config.max_attempts:
            return ApiError(502, "The ML nodes failed before answering.", "server_error", "upstream_failed")
        self.metrics.retries += 1
        return None

    # ------------------------------------------------------------------ another host has the inference

    async def relay_unpaid(self, request: ChatRequest, unpaid: Unpaid, send: Send) -> int:
        """The host refused as unpaid: a client's failover raced its first TA's start, so the host the chain names
        has it. That host's answer, else the refusal as the host gave it."""
        answered = await self.answer_again(request, send)
        if answered is not None:
            return answered
        return await send_whole(send, 402, unpaid.body, [(b"content-type", b"application/json")])

    async def answer_again(self, request: ChatRequest, send: Send) -> int | None:
        """A request the chain already has (its client failed over from another TA): the same signed request to
        the host the chain names, which serves it once: the answer it kept when it finished it, or the answer
        itself when it is still the executor (``host/proxy.py``, ``one_answer``); None when the chain names
        no host or no node of that host answers."""
        inference = request.requester.inference_id
        executor = await self.call(self.chain.executor_of, inference)
        headers = forward_headers(request.requester, self.address, request.chosen_seed)
        hosts = [s for s in self.router.nodes.values() if s.node.operator == executor]
        for state in sorted(hosts, key=lambda s: not s.alive):  # a missed poll is no reason not to ask it
            answer = await self.forwarder.fetch(state, request.body, headers)
            if answer is not None:
                response, data = answer
                await send_whole(send, 200, data, answer_headers(response, inference))
                self.metrics.answered_again += 1
                return 200
        return None

    async def chain_retrying(self, method: Callable[..., T], *args: Any) -> T | ApiError:
        """A chain call, tried again while the node does not answer (``RPCError``: restarting, say) for up to
        ``chain_retry_s``; then 503 ``chain_unavailable``, never a refusal the chain did not make."""
        deadline = time.monotonic() + self.config.chain_retry_s
        pause = 0.05
        while True:
            try:
                return await self.call(method, *args)
            except RPCError as error:
                if time.monotonic() >= deadline:
                    return ApiError(
                        503, f"The TA's chain node does not answer: {error}", "server_error", "chain_unavailable"
                    )
                self.metrics.chain_retries += 1
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
