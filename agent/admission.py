"""Admission: a slot on a capable ML node for a request, at once or after a wait in the fee-priority queue.

A slot is the node's local count (``NodeState.local``) taken; ``release`` gives it back and hands freed capacity
to the queue's best waiter. Refusals are values: 503 when no live node serves the model, 429 when the queue is
full or the wait runs out; ``GONE`` when the client left while waiting.
"""

from __future__ import annotations

import asyncio

from agent.errors import rate_limited, unavailable
from agent.queue import FeeQueue, Waiter
from agent.request import GONE, Outcome
from agent.router import NoCapableNode, NodeState, Router
from sdk.http.asgi import Receive
from sdk.http.errors import ApiError


class Admission:
    """Slots on the router's nodes, handed out at once or in the fee queue's order."""

    def __init__(self, router: Router, queue: FeeQueue, timeout_s: float, retry_after_s: int) -> None:
        self.router = router
        self.queue = queue
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s

    async def acquire(
        self, model: str, fee: int, exclude: frozenset[tuple[str, str]], receive: Receive
    ) -> NodeState | Outcome:
        """A slot on a node serving ``model`` (not one of ``exclude``), waiting in the queue if need be (behind
        any waiter already there, so the queue's order holds)."""
        try:
            if not self.queue.has_waiters(model):
                state = self.router.pick(model, exclude)
                if state is not None:
                    state.local += 1
                    return state
            else:
                self.router.pick(model, exclude)  # only to refuse at once when no live node serves the model
        except NoCapableNode:
            return unavailable(f"No live ML node serves {model!r}.")
        waiter = self.queue.push(model, fee, exclude)
        if waiter is None:
            return rate_limited(
                f"Every node serving {model!r} is busy and the queue is full ({self.queue.bound} waiting).",
                self.retry_after_s,
            )
        self.queue.drain()
        if waiter.future.done():
            return handed(waiter)
        return await self._wait(waiter, receive)

    async def _wait(self, waiter: Waiter, receive: Receive) -> NodeState | Outcome:
        """The slot the queue hands ``waiter``; ``GONE`` when the client leaves first (a slot handed meanwhile is
        given back); 429 after ``timeout_s``."""
        gone = asyncio.ensure_future(receive())
        try:
            await asyncio.wait((waiter.future, gone), timeout=self.timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not gone.done():
                gone.cancel()
        left = gone.done() and not gone.cancelled()
        if waiter.future.done() and not waiter.future.cancelled():
            if not left:
                return handed(waiter)
            if waiter.future.exception() is None:
                self.release(waiter.future.result())
            return GONE
        self.queue.leave(waiter)
        waiter.future.cancel()
        if left:
            return GONE
        return rate_limited(f"Waited {self.timeout_s} s in the queue for {waiter.model!r}.", self.retry_after_s)

    def release(self, state: NodeState) -> None:
        state.local -= 1
        if self.queue.waiting:
            self.queue.drain()


def handed(waiter: Waiter) -> NodeState | ApiError:
    """What the queue gave ``waiter``: a slot, or its 503 when no live node serves the model any more."""
    try:
        return waiter.future.result()
    except ApiError as error:
        return error
