"""``CommittedInferences``: the x/inference records of this host's inferences as the committed blocks leave them,
kept from each new block's events (``sdk.client.heights.HeightFollower``: one ``block_results`` read a block), so
the admission's ``confirm`` and the finisher ask the chain (``Query/Inference``) only for what the blocks it read
cannot answer.

What is kept, per inference id: the record a ``start_inference`` naming this host as executor builds (its terms
are the event's: model, max_tokens, seed, params_hash), changed by the later events of that id (``finish_inference``:
FINISHED by its executor; ``expire_inference``: EXPIRED; ``invalidate_inference``: INVALIDATED), or the record a
read of the chain returned. An event the index does not follow (a take-over or a reassignment of a kept id, or of
any id to this host) leaves the id to the chain: the next question about it reads the chain again. Every event
moves a record forward only (a start never replaces a record kept, an expiry only ends a STARTED one), so a read
that saw a later state than the follower has applied is never undone by the events between.

``seen(id)`` answers from the blocks only when the follower has applied every height since it started through the
committed height (``ASK`` otherwise): the record, or None when no start of it naming this host is in those
heights (a start from before them would not be: who must be sure reads the chain, ``read``). After
``keep_heights`` heights without news of an id it is forgotten (asked of the chain again if ever needed)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

from protogen.gonka.inference.v1 import inference_pb2
from sdk.client.heights import Event, HeightFollower
from sdk.client.querier import Querier
from x.inference.client import inference

Inference = inference_pb2.Inference


class Ask:
    """The index cannot tell: ask the chain."""


ASK: Final = Ask()
HANDED_ON = frozenset({"take_over_inference", "reassign_inference"})
"""Events that move an inference to another executor; the index leaves them to the chain."""
FOLLOWED = HANDED_ON | {"start_inference", "finish_inference", "expire_inference", "invalidate_inference"}


class CommittedInferences:
    """The records of the inferences naming the host ``address``, over its node's JSON-RPC (``rpc``: ``call`` and
    ``app_height``) and queries (``querier``). Thread-safe."""

    def __init__(
        self,
        rpc: Any,
        querier: Querier,
        address: str,
        poll_s: float = 0.02,
        keep_heights: int = 200,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.querier, self.address, self.keep_heights = querier, address, keep_heights
        self.follower = HeightFollower(
            rpc.call, rpc.app_height, FOLLOWED, self._apply, self._forget, poll_s, clock=clock
        )
        self.lock = threading.Lock()
        self.records: OrderedDict[bytes, tuple[int, Inference | Ask]] = OrderedDict()
        """Id → (the height of its last news, its record or ``ASK``), the oldest news first."""
        self.reads = 0

    def sync(self) -> int:
        """Apply the blocks committed since the last call; the committed height."""
        return self.follower.sync()

    def seen(self, inference_id: bytes, height: int) -> Inference | None | Ask:
        """The record as the blocks through ``height`` (one ``sync`` returned) left it; None: no start of it naming
        this host in the heights followed; ``ASK``: the index cannot tell."""
        if not self.follower.current(height):
            return ASK
        with self.lock:
            kept = self.records.get(inference_id)
        return None if kept is None else kept[1]

    def record(self, inference_id: bytes, height: int) -> Inference | None:
        """The committed record: the blocks', else the chain's (``read``); None when neither has one."""
        seen = self.seen(inference_id, height)
        return seen if isinstance(seen, Inference) else self.read(inference_id)

    def read(self, inference_id: bytes) -> Inference | None:
        """The chain's record (``Query/Inference``), kept for the next questions."""
        record = inference(self.querier, inference_id)
        with self.lock:
            self.reads += 1
            if record is not None:
                self._keep(inference_id, record)
        return record

    # --- the follower's side ----------------------------------------------------------------------------------

    def _keep(self, inference_id: bytes, record: Inference | Ask) -> None:
        self.records[inference_id] = (self.follower.height, record)
        self.records.move_to_end(inference_id)
        self._prune()

    def _prune(self) -> None:
        """Forget the ids without news for ``keep_heights``."""
        while self.records:
            oldest, (height, _) = next(iter(self.records.items()))
            if height + self.keep_heights > self.follower.height:
                break
            del self.records[oldest]

    def _forget(self, since: int) -> None:
        with self.lock:
            self.records.clear()

    def _apply(self, height: int, events: list[Event]) -> None:
        with self.lock:
            for kind, attributes in events:
                self._move(height, kind, bytes.fromhex(attributes["id"]), attributes)
            self._prune()

    def _move(self, height: int, kind: str, inference_id: bytes, attributes: dict[str, str]) -> None:
        kept = self.records.get(inference_id)
        record = None if kept is None else kept[1]
        if kind in HANDED_ON:
            if record is not None or attributes.get("executor") == self.address:
                self._keep(inference_id, ASK)
            return
        if kind == "start_inference":
            if record is None and attributes.get("executor") == self.address:
                self._keep(inference_id, started(height, inference_id, attributes))
            return
        if not isinstance(record, Inference):
            return
        moved = Inference()
        moved.CopyFrom(record)
        if kind == "finish_inference" and record.status == inference_pb2.STATUS_STARTED:
            moved.status, moved.executor, moved.previous_executor = (
                inference_pb2.STATUS_FINISHED,
                attributes["executor"],
                "",
            )
            moved.finish_height = height
        elif kind == "expire_inference" and record.status == inference_pb2.STATUS_STARTED:
            moved.status, moved.finish_height = inference_pb2.STATUS_EXPIRED, height
        elif kind == "invalidate_inference" and record.status == inference_pb2.STATUS_FINISHED:
            moved.status = inference_pb2.STATUS_INVALIDATED
        else:
            return
        self._keep(inference_id, moved)


def started(height: int, inference_id: bytes, attributes: dict[str, str]) -> Inference:
    """The record a ``start_inference`` event describes."""
    return Inference(
        id=inference_id,
        requester=attributes["requester"],
        ta=attributes["ta"],
        executor=attributes["executor"],
        model=attributes["model"],
        max_tokens=int(attributes["max_tokens"]),
        seed=int(attributes["seed"]),
        params_hash=bytes.fromhex(attributes["params_hash"]),
        status=inference_pb2.STATUS_STARTED,
        start_height=height,
        assigned_height=height,
    )
