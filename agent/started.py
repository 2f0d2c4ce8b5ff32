"""``StartedIds``: the inference ids the committed blocks started, read once a block from their events
(``sdk.client.heights.HeightFollower``), so the Transfer Agent's check that a request is not on chain already
(``ChainInferenceView.known``) costs no chain read for the requests it can answer.

Freshness rule. ``known(id, timestamp_ns)`` answers:

- True when a ``start_inference`` of the id is in a block read (a start is never undone);
- False when none is, the follower has read every block through the committed height it just polled (at most
  ``poll_s`` old) but the last one, which another request may be reading at that moment (a request never waits
  for a block's events), and no block it did not read could hold one: a start is in a block whose time is at least
  the request's timestamp less ``request_max_future_s`` (x/inference, ``inference/8``), and ``floor`` bounds the
  time of every block not read: the blocks before the follower started (``lookback`` heights below the committed
  height: ``floor`` is the block time of the last of them, from its header), skipped after falling behind (the
  same), or read and forgotten after ``keep_s`` (made by the wall time they were read at, so a block time of at
  most that plus ``skew_s``; a header the node does not give is bounded the same way). So a request stamped after
  ``floor + request_max_future_s`` is judged by the blocks read alone;
- None otherwise (a request stamped earlier, the follower behind): the caller asks the chain.

Like the chain's own answer, this sees committed blocks only: a start still in a mempool, or in the last block
committed (being read, or since the last poll), is not seen, and a duplicate start that slips through is refused
in its block (``inference/9``), where the chain has the last word.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sdk.client.heights import Event, HeightFollower
from sdk.client.rpc import RPCError


class StartedIds:
    """Over a node's JSON-RPC (``call``) and committed height (``app_height``); ``future_s()``: the chain's
    ``request_max_future_s``. Thread-safe."""

    def __init__(
        self,
        call: Callable[..., dict[str, Any]],
        app_height: Callable[[], int],
        future_s: Callable[[], int],
        poll_s: float = 0.02,
        keep_s: float = 300.0,
        skew_s: float = 10.0,
        lookback: int = 200,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.call, self.future_s, self.keep_s, self.skew_s, self.wall = call, future_s, keep_s, skew_s, wall
        self.follower = HeightFollower(
            call,
            app_height,
            frozenset({"start_inference"}),
            self._apply,
            self._restart,
            poll_s,
            lookback=lookback,
            clock=clock,
        )
        self.lock = threading.Lock()
        self.ids: OrderedDict[bytes, float] = OrderedDict()
        """Id → the wall time its block was read, the oldest first."""
        self.floor = 0.0
        """No block not read has a block time after this (seconds)."""

    def known(self, inference_id: bytes, timestamp_ns: int) -> bool | None:
        """Whether a start of ``inference_id`` (a request stamped ``timestamp_ns``) is committed; None: the blocks
        read cannot tell."""
        height = self.follower.sync(wait=False)
        with self.lock:
            if inference_id in self.ids:
                return True
            floor = self.floor
        if not self.follower.current(height - 1):
            return None
        if timestamp_ns <= (floor + self.future_s()) * 1e9:
            return None
        return False

    def _restart(self, since: int) -> None:
        """The blocks through ``since`` are not read: the floor is the time of the last of them."""
        try:
            bound = block_time_s(self.call("header", height=str(since))["header"]["time"]) if since else 0.0
        except (RPCError, KeyError, ValueError):
            bound = self.wall() + self.skew_s
        with self.lock:
            self.floor = max(self.floor, bound)

    def _apply(self, height: int, events: list[Event]) -> None:
        now = self.wall()
        with self.lock:
            for _, attributes in events:
                self.ids[bytes.fromhex(attributes["id"])] = now
            while self.ids:
                oldest, seen = next(iter(self.ids.items()))
                if seen + self.keep_s > now:
                    break
                del self.ids[oldest]
                self.floor = max(self.floor, seen + self.skew_s)


def block_time_s(text: str) -> float:
    """CometBFT's block time (RFC 3339, UTC, up to nanoseconds: ``2026-12-02T23:14:09.123456789Z``) in seconds."""
    whole, _, fraction = text.removesuffix("Z").partition(".")
    since_epoch = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    return since_epoch + float("0." + (fraction or "0"))
