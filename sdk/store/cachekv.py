"""Write-buffering branches over a key-value store: one for the block, one per transaction.

Iteration semantics, shared with CommitStore.iterate: keys that start with ``prefix`` and
lie in ``[start, end)`` (``start``/``end`` are full keys, None = unbounded), ascending, or
descending with ``reverse=True``.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from typing import Protocol


class KVStore(Protocol):
    def get(self, key: bytes) -> bytes | None: ...

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]: ...


def prefix_end(prefix: bytes) -> bytes | None:
    """Smallest key greater than every key starting with ``prefix`` (None: no such key)."""
    p = prefix.rstrip(b"\xff")
    if not p:
        return None
    return p[:-1] + bytes([p[-1] + 1])


def clip_range(prefix: bytes, start: bytes | None, end: bytes | None) -> tuple[bytes, bytes | None] | None:
    """The half-open key range ``[lo, hi)`` selected by prefix/start/end; None when empty."""
    lo = prefix if start is None or start < prefix else start
    hi = prefix_end(prefix)
    if end is not None and (hi is None or end < hi):
        hi = end
    if hi is not None and lo >= hi:
        return None
    return lo, hi


def check_key(key: object) -> None:
    if type(key) is not bytes or not key:
        raise ValueError(f"keys must be non-empty bytes, got {key!r}")


PRESENT = b"\x01"
"""The value of an entry that only says "this key is there" (an index): values are never empty."""


def check_value(value: object) -> None:
    """Values are non-empty bytes: an ICS23 existence proof carries its value, and an empty one is refused
    (so an empty value would also leave its neighbours' absent keys unprovable)."""
    if type(value) is not bytes or not value:
        raise ValueError(f"values must be non-empty bytes, got {value!r:.40}")


class CacheKV:
    """A write-buffer over a parent store (CommitStore or another CacheKV).

    Writes stay here until ``write()`` pushes them into a CacheKV parent; for the block's
    root branch hand ``changes()`` to ``CommitStore.apply``. A pending delete is kept as
    ``None`` so it hides the parent's value.
    """

    __slots__ = ("_parent", "_writes", "_sorted")

    def __init__(self, parent: KVStore) -> None:
        self._parent = parent
        self._writes: dict[bytes, bytes | None] = {}
        self._sorted: list[bytes] | None = None  # sorted keys of _writes: built by the first iterate, then kept

    def get(self, key: bytes) -> bytes | None:
        w = self._writes
        if key in w:
            return w[key]
        return self._parent.get(key)

    def has(self, key: bytes) -> bool:
        return self.get(key) is not None

    def set(self, key: bytes, value: bytes) -> None:
        check_key(key)
        check_value(value)
        if key not in self._writes:
            self._add_sorted(key)
        self._writes[key] = value

    def delete(self, key: bytes) -> None:
        check_key(key)
        if key not in self._writes:
            self._add_sorted(key)
        self._writes[key] = None

    def _add_sorted(self, key: bytes) -> None:
        """Keep the sorted keys once built: a block that writes and iterates in turn (each finish numbers its
        leaf by the last one) would otherwise sort all its writes again at every iteration."""
        if self._sorted is not None:
            insort(self._sorted, key)

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        """Merged, sorted view of parent and own writes, deletions hidden.

        Own writes in range are snapshotted now; later writes do not affect this iterator.
        """
        rng = clip_range(prefix, start, end)
        if rng is None:
            return iter(())
        lo, hi = rng
        keys = self._sorted
        if keys is None:
            keys = self._sorted = sorted(self._writes)
        i = bisect_left(keys, lo)
        j = len(keys) if hi is None else bisect_left(keys, hi)
        parent = self._parent.iterate(prefix, start, end, reverse)
        if i == j:
            return parent
        w = self._writes
        own = [(k, w[k]) for k in keys[i:j]]
        if reverse:
            own.reverse()
        return _merge(parent, own, reverse)

    def branch(self) -> CacheKV:
        return CacheKV(self)

    def write(self) -> None:
        """Flush own writes into the parent, which must have set/delete (a CacheKV)."""
        parent = self._parent
        if type(parent) is CacheKV:
            parent._absorb(self._writes)
        elif not (hasattr(parent, "set") and hasattr(parent, "delete")):
            raise TypeError("parent has no set/delete; hand changes() to CommitStore.apply instead")
        else:
            for k, v in self._writes.items():
                if v is None:
                    parent.delete(k)
                else:
                    parent.set(k, v)
        self._writes = {}
        self._sorted = None

    def _absorb(self, writes: dict[bytes, bytes | None]) -> None:
        """A child branch's writes, as its ``set``/``delete`` calls would leave them, without checking each
        key and value again (the child's own ``set`` and ``delete`` checked them): every tx writes two."""
        if self._sorted is not None:
            own = self._writes
            for key in writes:
                if key not in own:
                    insort(self._sorted, key)
        self._writes.update(writes)

    def changes(self) -> dict[bytes, bytes | None]:
        """Own writes (None = delete), e.g. for CommitStore.apply at block end."""
        return dict(self._writes)


def _merge(
    parent: Iterator[tuple[bytes, bytes]], own: list[tuple[bytes, bytes | None]], reverse: bool
) -> Iterator[tuple[bytes, bytes]]:
    """Merge two streams sorted in the same direction; ``own`` wins ties, None hides."""
    n = len(own)
    i = 0
    for pk, pv in parent:
        while i < n and ((own[i][0] > pk) if reverse else (own[i][0] < pk)):
            k, v = own[i]
            i += 1
            if v is not None:
                yield k, v
        if i < n and own[i][0] == pk:
            v = own[i][1]
            i += 1
            if v is not None:
                yield pk, v
        else:
            yield pk, pv
    for k, v in own[i:]:
        if v is not None:
            yield k, v
