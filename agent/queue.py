"""The fee-priority queue: requests that find every capable node full wait here, ordered by the fee per
token they offer (higher first), then by arrival. The bound counts every waiting request; beyond it the TA
answers 429 with Retry-After. A waiter that leaves (client disconnect, timeout) is dropped lazily.

There is one heap per model; when capacity frees up, ``drain`` hands it out by comparing the heads of the
heaps, so a node serving several models goes to the best-paying request among them.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from dataclasses import dataclass, field

from agent.router import NoCapableNode, NodeState, Router
from sdk.http.errors import ApiError


@dataclass(order=True)
class Waiter:
    priority: tuple[int, int]
    model: str = field(compare=False)
    exclude: frozenset[tuple[str, str]] = field(compare=False)
    future: asyncio.Future[NodeState] = field(compare=False)
    gone: bool = field(default=False, compare=False)


class FeeQueue:
    def __init__(self, router: Router, bound: int) -> None:
        self.router = router
        self.bound = bound
        self.heaps: dict[str, list[Waiter]] = {}
        self.waiting = 0
        self._arrivals = itertools.count()

    def __len__(self) -> int:
        return self.waiting

    def has_waiters(self, model: str) -> bool:
        heap = self.heaps.get(model)
        return bool(heap)

    def push(self, model: str, fee: int, exclude: frozenset[tuple[str, str]]) -> Waiter | None:
        """A new waiter, or None when the queue is full."""
        if self.waiting >= self.bound:
            return None
        loop = asyncio.get_running_loop()
        waiter = Waiter((-fee, next(self._arrivals)), model, exclude, loop.create_future())
        heapq.heappush(self.heaps.setdefault(model, []), waiter)
        self.waiting += 1
        return waiter

    def leave(self, waiter: Waiter) -> None:
        if not waiter.gone:
            waiter.gone = True
            self.waiting -= 1

    def _head(self, model: str) -> Waiter | None:
        heap = self.heaps.get(model)
        while heap and heap[0].gone:
            heapq.heappop(heap)
        if not heap:
            self.heaps.pop(model, None)
            return None
        return heap[0]

    def drain(self) -> None:
        """Give free capacity to the best waiters, as long as some waiter can be placed."""
        blocked: set[str] = set()
        while self.waiting:
            heads = [
                (head.priority, head)
                for model in list(self.heaps)
                if model not in blocked and (head := self._head(model)) is not None
            ]
            if not heads:
                return
            _, head = min(heads, key=lambda pair: pair[0])
            try:
                state = self.router.pick(head.model, head.exclude)
            except NoCapableNode:
                self._pop(head)
                head.future.set_exception(
                    ApiError(503, f"No live ML node serves {head.model!r}.", "server_error", "no_capable_node")
                )
                continue
            if state is None:
                blocked.add(head.model)
                continue
            self._pop(head)
            state.local += 1
            head.future.set_result(state)

    def _pop(self, waiter: Waiter) -> None:
        heapq.heappop(self.heaps[waiter.model])
        self.leave(waiter)
