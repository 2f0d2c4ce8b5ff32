"""Versioned key-value store on LevelDB with a Jellyfish Merkle tree commitment (see README.md).

One DB holds, by one-byte prefix:
  ``l`` + key              -> value        latest committed state, for reads and iteration
  ``n`` + borsh(NodeKey)   -> tree node    (a leaf's record also holds its key and value)
  ``s`` + ver8             -> one blob listing the nodes that became stale at that version
  ``m``                    -> latest version (u64) and oldest kept version (u64)
The tree itself is the ``jmt`` crate's, in the native module ``_jmt``: it reads committed nodes through
``_load`` and puts what a version writes into that version's write batch; every version is written by
that one batch, so a crash leaves the old or the new version.
Not thread-safe: one writer, with reads from the same thread (the native node cache is mutated by commit
and read by proofs). The one exception is ``snapshot()``: taken on the owner's thread, a ``Snapshot`` of
the latest-state table may then be read and closed on another thread while the owner goes on committing.
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import plyvel

from . import _jmt
from .cachekv import check_key, check_value, clip_range

LATEST = b"l"
_LATEST_END = b"m"
STALE = b"s"
META = b"m"

DB_OPTIONS: dict[str, Any] = {
    "create_if_missing": True,
    "write_buffer_size": 64 << 20,  # a 100k-key block writes tens of MB; avoid memtable stalls
    "bloom_filter_bits": 10,
    "lru_cache_size": 64 << 20,
}
"""plyvel.DB options used by CommitStore (the benchmark uses them for its baseline too)."""


def _v8(version: int) -> bytes:
    return version.to_bytes(8, "big")


EMPTY_ROOT: bytes = _jmt.EMPTY_ROOT
"""Root hash of the empty tree (version 0): the crate's ``SPARSE_MERKLE_PLACEHOLDER_HASH``."""


_LEN_BYTE = [bytes((n,)) for n in range(256)]


def _pack_keys(keys: list[bytes]) -> bytes:
    """Stale blob: each node key preceded by its length in one byte (node keys are <= 53 bytes)."""
    lb = _LEN_BYTE
    return b"".join([lb[len(k)] + k for k in keys])


def _unpack_keys(blob: bytes) -> list[bytes]:
    keys = []
    o = 0
    while o < len(blob):
        n = blob[o]
        keys.append(blob[o + 1 : o + 1 + n])
        o += 1 + n
    return keys


def _until(it: Iterator[tuple[bytes, bytes]], lo: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Latest-table items of a descending iterator down to ``lo`` inclusive, unprefixed."""
    for k, v in it:
        if k < lo:
            return
        yield k[1:], v


def _iterate_latest(
    reader: Any, prefix: bytes, start: bytes | None, end: bytes | None, reverse: bool
) -> Iterator[tuple[bytes, bytes]]:
    """``CommitStore.iterate`` over ``reader``, the DB or one of its snapshots."""
    rng = clip_range(prefix, start, end)
    if rng is None:
        return iter(())
    lo, hi = rng
    stop = _LATEST_END if hi is None else LATEST + hi
    if not reverse:
        return ((k[1:], v) for k, v in reader.iterator(start=LATEST + lo, stop=stop))
    # plyvel 1.5 skips everything in reverse when the first key it meets equals `start`,
    # so bound it by the bare table prefix (never a key) and stop at `lo` here.
    return _until(reader.iterator(start=LATEST, stop=stop, reverse=True), LATEST + lo)


class Snapshot:
    """The latest-state table of one committed version, unchanged by later commits.

    A LevelDB snapshot reads only the table (never the Merkle node cache), so unlike the store it
    may be used on a thread other than the committer's: module queries and simulations read one on
    a worker thread while blocks commit on the event loop. Take it on the store's thread (so that it
    and ``version`` agree), and close it on the thread that reads it, after the last read: LevelDB
    must not release a snapshot that a read is still using.
    """

    __slots__ = ("version", "_snapshot")

    def __init__(self, snapshot: Any, version: int) -> None:
        self.version = version
        self._snapshot = snapshot

    def get(self, key: bytes) -> bytes | None:
        check_key(key)
        return self._snapshot.get(LATEST + key)

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        return _iterate_latest(self._snapshot, prefix, start, end, reverse)

    def close(self) -> None:
        self._snapshot.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class VersionView:
    """The whole state of one kept version, read-only and in memory, for reading all of it (a genesis
    export) at a version whose latest-state table is gone: ``get`` and sorted ``iterate`` as the store's."""

    __slots__ = ("version", "_keys", "_values")

    def __init__(self, version: int, items: list[tuple[bytes, bytes]]) -> None:
        """``items``: every (key, value) of the version, sorted by key (``CommitStore.items_at``)."""
        self.version = version
        self._keys = [k for k, _ in items]
        self._values = [v for _, v in items]

    def get(self, key: bytes) -> bytes | None:
        check_key(key)
        i = bisect_left(self._keys, key)
        return self._values[i] if i < len(self._keys) and self._keys[i] == key else None

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        rng = clip_range(prefix, start, end)
        if rng is None:
            return iter(())
        lo, hi = rng
        keys, values = self._keys, self._values
        i = bisect_left(keys, lo)
        j = len(keys) if hi is None else bisect_left(keys, hi)
        span = range(j - 1, i - 1, -1) if reverse else range(i, j)
        return ((keys[n], values[n]) for n in span)


class VersionSnapshot:
    """One kept version older than the latest, frozen for a query at that height, with ``Snapshot``'s
    threading rule: taken on the store's thread, then read and closed on one other thread.

    Its reads walk the version's tree inside a LevelDB snapshot (a commit that prunes the version meanwhile
    cannot pull nodes from under it) through a native tree of its own, made by the reading thread (a tree
    may be used only by the thread that made it) and without the store's node cache, which only the store's
    thread may touch. A ``get`` walks one path; the tree orders keys by their hash, so the first ``iterate``
    reads the whole version once (``items_at``'s walk) and later reads use that.
    """

    __slots__ = ("version", "_snapshot", "_tree", "_view")

    def __init__(self, snapshot: Any, version: int) -> None:
        self.version = version
        self._snapshot = snapshot
        self._tree: Any = None
        self._view: VersionView | None = None

    def _load(self, keys: list[bytes]) -> list[bytes | None]:
        get = self._snapshot.get
        return [get(k) for k in keys]

    def _reader(self) -> Any:
        if self._tree is None:
            self._tree = _jmt.Tree(self._load, 0)
        return self._tree

    def get(self, key: bytes) -> bytes | None:
        check_key(key)
        if self._view is not None:
            return self._view.get(key)
        return None if self.version == 0 else self._reader().get(key, self.version)

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        if self._view is None:
            items = self._reader().items(self.version) if self.version else []
            items.sort(key=itemgetter(0))
            self._view = VersionView(self.version, items)
        return self._view.iterate(prefix, start, end, reverse)

    def close(self) -> None:
        self._tree = self._view = None
        self._snapshot.close()

    def __enter__(self) -> VersionSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for one batch: a block's updates and records are tens of thousands of
    short-lived tuples and bytes, none of them cyclic, and each collection they trigger would walk the
    whole young heap."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class VersionUnavailableError(KeyError, ValueError):
    """The requested version was pruned or never committed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(slots=True)
class _Staged:
    """A computed but unwritten version: its write batch and what commit needs besides."""

    version: int
    batch: Any  # plyvel.WriteBatch holding latest-table changes and new nodes
    root: bytes
    stale: list[bytes]  # DB keys of nodes replaced or deleted by this version


class UnprovableError(ValueError):
    """What ICS23 cannot express: a proof against the empty tree (every proof stands on a leaf)."""


class CommitStore:
    """Latest-state reads plus versioned, provable history, one version per block."""

    def __init__(self, path: str, keep_recent: int = 0, cache_size: int = 200_000, *, sync: bool = False) -> None:
        """``keep_recent``: versions kept (0 = all). ``cache_size``: internal nodes held
        in memory (about 1 KB each). ``sync``: fsync each commit (a process crash is safe either way)."""
        if keep_recent < 0 or cache_size < 0:
            raise ValueError("keep_recent and cache_size must be >= 0")
        self._db = plyvel.DB(path, **DB_OPTIONS)
        self._keep_recent = keep_recent
        self._tree = _jmt.Tree(self._load, cache_size)
        self._sync = sync
        self.node_reads = 0
        """Tree nodes read from LevelDB (the native cache lacked them), for tuning."""
        self._staged: _Staged | None = None
        self._first_version = 1
        meta = self._db.get(META)
        if meta is None:
            self._version, self._oldest, self._root = 0, 0, EMPTY_ROOT
        else:
            self._version = int.from_bytes(meta[:8], "big")
            self._oldest = int.from_bytes(meta[8:16], "big")
            self._root = self._tree.root_hash(self._version)

    # -- latest committed state --------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    @property
    def root_hash(self) -> bytes:
        return self._root

    def get(self, key: bytes) -> bytes | None:
        check_key(key)
        return self._db.get(LATEST + key)

    def has(self, key: bytes) -> bool:
        return self.get(key) is not None

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        """Keys starting with ``prefix`` in ``[start, end)``, sorted (descending if reverse)."""
        return _iterate_latest(self._db, prefix, start, end, reverse)

    def snapshot(self) -> Snapshot:
        """The latest committed state as of now, frozen; see ``Snapshot`` for the threading rule."""
        return Snapshot(self._db.snapshot(), self._version)

    def snapshot_at(self, version: int) -> Snapshot | VersionSnapshot:
        """A kept version frozen as of now, for a query at that height: ``snapshot()`` for the latest, else a
        ``VersionSnapshot`` (same threading rule). VersionUnavailableError if it is not kept."""
        self._check_version(version)
        if version == self._version:
            return self.snapshot()
        return VersionSnapshot(self._db.snapshot(), version)

    # -- writing -----------------------------------------------------------------------

    def apply(self, changes: Mapping[bytes, bytes | None]) -> bytes:
        """Stage version+1 as the committed state plus ``changes`` (None = delete) and
        return its root hash. Nothing is persisted; a later apply replaces this one."""
        updates = []
        for key, value in changes.items():
            check_key(key)
            if value is not None:
                check_value(value)
            updates.append((key, value))
        self._staged = None
        version = self._version + 1 if self._version else self._first_version
        with _gc_paused():
            batch = self._db.write_batch(sync=self._sync)
            root, stale = self._tree.apply(version, updates, self._version == 0, batch.put)
            put, delete = batch.put, batch.delete
            for key, value in updates:
                if value is None:
                    delete(LATEST + key)
                else:
                    put(LATEST + key, value)
        self._staged = _Staged(version, batch, root, stale)
        return root

    def discard(self) -> None:
        self._staged = None
        self._tree.discard()

    def set_initial_version(self, version: int) -> None:
        """Make the first commit version ``version``, for a chain that starts above height 1 (InitChain's
        ``initial_height``, e.g. from an exported genesis), so that versions stay block heights. Only on an
        empty store; kept in memory until that commit, whose version is then the oldest kept."""
        if self._version:
            raise ValueError(f"the store already holds version {self._version}")
        if type(version) is not int or version < 1:
            raise ValueError(f"initial version must be a positive int, got {version!r}")
        self.discard()
        self._first_version = version

    def commit(self) -> int:
        """Persist the staged version (an empty one if none) in one write batch, pruning
        versions that fall out of ``keep_recent`` in the same batch."""
        if self._staged is None:
            self.apply({})
        st = self._staged
        assert st is not None
        with _gc_paused():
            self._commit(st)
        return st.version

    def _commit(self, st: _Staged) -> None:
        ver8 = _v8(st.version)
        batch = st.batch
        # A first version above 1 (set_initial_version) has no history below it to keep or prune.
        previous = self._oldest if st.version == self._version + 1 else st.version
        oldest = previous
        if self._keep_recent:
            oldest = max(oldest, st.version - self._keep_recent + 1)
        pruned: list[bytes] = []
        for s in range(previous + 1, oldest + 1):
            if s == st.version:
                keys = st.stale  # stale already at the new version: never stored
            else:
                blob = self._db.get(STALE + _v8(s))
                keys = _unpack_keys(blob) if blob else []
                batch.delete(STALE + _v8(s))
            pruned.extend(keys)
        # An empty block copies its root without making the old one stale: old roots go by version.
        pruned.extend(_jmt.root_db_key(v) for v in range(max(previous, 1), oldest))
        for k in pruned:
            batch.delete(k)
        if st.stale and st.version > oldest:
            batch.put(STALE + ver8, _pack_keys(st.stale))
        batch.put(META, ver8 + _v8(oldest))
        batch.write()

        self._staged = None
        self._version = st.version
        self._oldest = oldest
        self._root = st.root
        self._tree.commit()
        if pruned:
            self._tree.forget(pruned)

    # -- history and proofs ------------------------------------------------------------

    def available_versions(self) -> tuple[int, int]:
        """(oldest kept, latest); version 0 is the empty tree."""
        return self._oldest, self._version

    def root_at(self, version: int) -> bytes:
        self._check_version(version)
        if version == self._version:
            return self._root
        return EMPTY_ROOT if version == 0 else self._tree.root_hash(version)

    def items_at(self, version: int) -> list[tuple[bytes, bytes]]:
        """Every (key, value) of a kept version, sorted by key: the latest version from its table, an older
        one by walking its whole tree (one LevelDB read per node, outside the node cache blocks use)."""
        self._check_version(version)
        if version == self._version:
            return list(self.iterate())
        if version == 0:
            return []
        items = self._tree.items(version)
        items.sort(key=itemgetter(0))
        return items

    def state_at(self, version: int) -> CommitStore | VersionView:
        """A read-only view of a kept version for ``CacheKV``/``Context``: the store itself at the latest
        version, else that version's ``items_at`` in memory. For reading a whole past state (export)."""
        self._check_version(version)
        return self if version == self._version else VersionView(version, self.items_at(version))

    def get_at(self, key: bytes, version: int) -> bytes | None:
        check_key(key)
        self._check_version(version)
        if version == self._version:
            return self._db.get(LATEST + key)
        return None if version == 0 else self._tree.get(key, version)

    def prove(self, key: bytes, version: int) -> tuple[bytes | None, bytes]:
        """The value of ``key`` at ``version`` (None if absent) and an ICS23 ``CommitmentProof`` of it
        (existence, or non-existence by its neighbours) against ``root_at(version)``.

        Raises UnprovableError for a version whose tree is empty: ICS23 has no proof against it."""
        check_key(key)
        self._check_version(version)
        if self.root_at(version) == EMPTY_ROOT:
            raise UnprovableError(f"the state is empty at version {version}: there is nothing to prove against")
        return self._tree.prove(key, version)

    def compact(self) -> None:
        """Compact the whole LevelDB, e.g. after a bulk load, so reads and writes stop
        paying for the compaction backlog."""
        self._db.compact_range()

    def close(self) -> None:
        self._staged = None
        self._tree = _jmt.Tree(self._load, 0)  # drop the cache (and its hold on this store)
        self._db.close()

    def __enter__(self) -> CommitStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------

    def _check_version(self, version: int) -> None:
        if type(version) is not int or not self._oldest <= version <= self._version:
            raise VersionUnavailableError(
                f"version {version!r} not available: kept versions are {self._oldest}..{self._version}"
            )

    def _load(self, keys: list[bytes]) -> list[bytes | None]:
        """Committed tree nodes by DB key, for the native tree (one call per tree level)."""
        self.node_reads += len(keys)
        get = self._db.get
        return [get(k) for k in keys]
