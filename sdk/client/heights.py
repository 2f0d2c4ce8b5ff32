"""``HeightFollower``: every height a node's application commits, read once (``block_results``) and handed on as
its events, so a program asking many questions of each new block pays one read a block instead of one a question.

Events are what the block's successful transactions and its ``FinalizeBlock`` emitted, in the block's order
(``(type, {key: value})``); a refused transaction's are left out (its messages did nothing). A height whose
results cannot be read is read again at the next ``sync``; until then the follower is not ``current`` at the
heights from it on, and its reader asks the chain itself. Fallen more than ``max_behind`` heights behind (or at
the first ``sync``) it starts again ``lookback`` heights below the committed height, reading those first, and
``restart(since)`` tells its reader that the heights up to ``since`` were not read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sdk.client.chain import Cached
from sdk.client.rpc import RPCError

Event = tuple[str, dict[str, str]]


def events_of(results: dict[str, Any], kinds: frozenset[str]) -> list[Event]:
    """The events of the types ``kinds`` in a ``block_results`` answer: each successful transaction's, then the
    block's own."""
    raw: list[dict[str, Any]] = []
    for result in results.get("txs_results") or []:
        if int(result.get("code") or 0) == 0:
            raw.extend(result.get("events") or [])
    raw.extend(results.get("finalize_block_events") or [])
    return [(e["type"], {a["key"]: a["value"] for a in e.get("attributes") or []}) for e in raw if e["type"] in kinds]


class HeightFollower:
    """Over ``call`` (CometBFT's JSON-RPC ``call``) and ``app_height`` (the committed height, polled at most every
    ``poll_s``): ``apply(height, events)`` for each new height in order, its events of the types ``kinds``;
    ``restart(since)`` when the heights through ``since`` were skipped. Thread-safe: one caller reads the new
    heights, the others wait for it, or (``sync(wait=False)``) go on with what was read."""

    def __init__(
        self,
        call: Callable[..., dict[str, Any]],
        app_height: Callable[[], int],
        kinds: frozenset[str],
        apply: Callable[[int, list[Event]], None],
        restart: Callable[[int], None],
        poll_s: float = 0.02,
        max_behind: int = 50,
        lookback: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.call, self.kinds, self.apply, self.restart = call, kinds, apply, restart
        self.max_behind, self.lookback = max(max_behind, lookback), lookback
        self.app_height = Cached(poll_s, app_height, clock)
        self.height = 0
        """The committed height the last ``sync`` saw."""
        self.followed: int | None = None
        """The last height whose events were applied (None before the first ``sync``)."""
        self.since = 0
        """The height the follower (re)started after: what was committed up to it was not read."""
        self.fetching = threading.Lock()

    def current(self, height: int) -> bool:
        """Whether every height from ``since`` through ``height`` (one ``sync`` returned) was applied, one at least."""
        followed = self.followed
        return followed is not None and self.since < followed and height <= followed

    def sync(self, wait: bool = True) -> int:
        """Apply the heights committed since the last call; the committed height (the last one seen when the node
        does not answer). ``wait=False``: when another caller is reading them, return at once."""
        try:
            target = self.app_height.get()
        except RPCError:
            return self.height
        self.height = max(self.height, target)
        if self.followed is not None and self.followed >= target:
            return target
        if not self.fetching.acquire(blocking=wait):
            return target
        try:
            if self.followed is None or target - self.followed > self.max_behind:
                self.followed = self.since = max(0, target - self.lookback)
                self.restart(self.since)
            while self.followed < target:
                try:
                    events = events_of(self.call("block_results", height=str(self.followed + 1)), self.kinds)
                except RPCError:  # not readable now: read again at the next call; meanwhile not current
                    break
                self.apply(self.followed + 1, events)
                self.followed += 1
        finally:
            self.fetching.release()
        return target
