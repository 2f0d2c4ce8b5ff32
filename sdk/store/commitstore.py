"""Versioned key-value store on LevelDB with a sparse Merkle commitment (see README.md).

One DB holds, by one-byte prefix:
  ``l`` + key            -> value          latest committed state, for reads and iteration
  ``n`` + ver8 + path    -> internal node  (path = nibbles as ASCII hex)
  ``k`` + ver8 + keyhash -> leaf node      (u32 key length, key, value)
  ``r`` + ver8           -> root reference of that version (b"" for the empty tree)
  ``s`` + ver8           -> one blob listing the nodes that became stale at that version
  ``m``                  -> latest version (u64) and oldest kept version (u64)
Every version is written by one write batch, so a crash leaves the old or the new version.
Not thread-safe: one writer, with reads from the same thread (the node cache is mutated by commit and by
reads). The one exception is ``snapshot()``: taken on the owner's thread, a ``Snapshot`` of the
latest-state table may then be read and closed on another thread while the owner goes on committing.
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from hashlib import sha256
from operator import itemgetter
from typing import Any

import plyvel

from .cachekv import check_key, clip_range
from .proof import Proof
from .smt import (
    LEAF_REF_LEN,
    NIBBLE,
    ZERO,
    BatchUpdate,
    check_ref,
    decode_internal,
    decode_leaf,
    leaf_key,
    leaf_refs,
    node_hashes,
    prepare_updates,
    ref_hash,
    walk,
)

LATEST = b"l"
_LATEST_END = b"m"
ROOT = b"r"
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


_LEN_BYTE = [bytes((n,)) for n in range(256)]


def _pack_keys(keys: list[bytes]) -> bytes:
    """Stale blob: each node key preceded by its length in one byte (keys are <= 73 bytes)."""
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


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for one batch: an update allocates ~10 containers per key, none
    of them cyclic, and each collection they trigger would walk the whole young heap."""
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


class _NodeCache:
    """Bounded map of internal-node DB key -> in-memory node.

    Nodes of the latest tree down to depth d are pinned: nearly every block touches them,
    and there are at most 1 + 16 + ... + 16^d of them, d chosen to keep that under half
    the capacity. Everything else is evicted oldest-inserted first. FIFO, not LRU:
    every node an update reads is replaced at commit (and dropped here as stale), so use
    and insertion go together, and the hot path's lookup stays a bare dict.get.
    """

    __slots__ = ("nodes", "_order", "_capacity", "_pinned_key_len")

    def __init__(self, capacity: int) -> None:
        self.nodes: dict[bytes, bytes] = {}
        self._order: deque[bytes] = deque()  # unpinned keys, oldest first; may hold dropped keys
        self._capacity = capacity
        depth, total = -1, 0
        while total + 16 ** (depth + 1) <= capacity // 2:
            depth += 1
            total += 16**depth
        self._pinned_key_len = 9 + depth  # b"n" + version8 + path of <= depth nibbles

    def add(self, nodes: dict[bytes, bytes], latest: bool) -> None:
        """Insert ``nodes``; pin the shallow ones if they belong to the latest tree (only
        those are sure to be dropped as stale when replaced)."""
        self.nodes.update(nodes)
        if latest:
            n = self._pinned_key_len
            self._order.extend([k for k in nodes if len(k) > n])
        else:
            self._order.extend(nodes)
        live, order = self.nodes, self._order
        while len(live) > self._capacity and order:
            live.pop(order.popleft(), None)
        if len(order) > 2 * len(live) + 4096:
            self._order = deque(k for k in order if k in live)  # forget dropped keys

    def discard(self, keys: list[bytes]) -> None:
        pop = self.nodes.pop
        for k in keys:
            pop(k, None)


@dataclass(slots=True)
class _Staged:
    """A computed but unwritten version: its write batch and what commit needs besides."""

    version: int
    batch: Any  # plyvel.WriteBatch holding latest-table changes and new nodes
    root: bytes
    nodes: dict[bytes, bytes]  # new internal nodes, for the cache
    stale: list[bytes]  # DB keys of nodes replaced or deleted by this version


class CommitStore:
    """Latest-state reads plus versioned, provable history, one version per block."""

    def __init__(self, path: str, keep_recent: int = 0, cache_size: int = 200_000, *, sync: bool = False) -> None:
        """``keep_recent``: versions kept (0 = all). ``cache_size``: internal nodes held
        in memory (about 1 KB each). ``sync``: fsync each commit (a process crash is safe either way)."""
        if keep_recent < 0 or cache_size < 0:
            raise ValueError("keep_recent and cache_size must be >= 0")
        self._db = plyvel.DB(path, **DB_OPTIONS)
        self._keep_recent = keep_recent
        self._cache = _NodeCache(cache_size)
        self._sync = sync
        self.cache_misses = 0
        """Internal nodes read from LevelDB because the cache lacked them (for tuning)."""
        self._staged: _Staged | None = None
        self._first_version = 1
        meta = self._db.get(META)
        if meta is None:
            self._version, self._oldest, self._root = 0, 0, b""
        else:
            self._version = int.from_bytes(meta[:8], "big")
            self._oldest = int.from_bytes(meta[8:16], "big")
            self._root = self._read_root(self._version)

    # -- latest committed state --------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    @property
    def root_hash(self) -> bytes:
        return ref_hash(self._root)

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

    # -- writing -----------------------------------------------------------------------

    def apply(self, changes: Mapping[bytes, bytes | None]) -> bytes:
        """Stage version+1 as the committed state plus ``changes`` (None = delete) and
        return its root hash. Nothing is persisted; a later apply replaces this one."""
        with _gc_paused():
            ups = prepare_updates(changes)
            self._staged = None
            version = self._version + 1 if self._version else self._first_version
            batch = self._db.write_batch(sync=self._sync)
            put = batch.put
            for key, value in changes.items():
                if value is None:
                    batch.delete(LATEST + key)
                else:
                    put(LATEST + key, value)
            upd = BatchUpdate(_v8(version), self._cache.nodes, self._load, put)
            root = upd.run(self._root, ups)
        self._staged = _Staged(version, batch, root, upd.nodes, upd.stale)
        return ref_hash(root)

    def discard(self) -> None:
        self._staged = None

    def set_initial_version(self, version: int) -> None:
        """Make the first commit version ``version``, for a chain that starts above height 1 (InitChain's
        ``initial_height``, e.g. from an exported genesis), so that versions stay block heights. Only on an
        empty store; kept in memory until that commit, whose version is then the oldest kept."""
        if self._version:
            raise ValueError(f"the store already holds version {self._version}")
        if type(version) is not int or version < 1:
            raise ValueError(f"initial version must be a positive int, got {version!r}")
        self._staged = None
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
        batch.put(ROOT + ver8, st.root)
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
            for k in keys:
                batch.delete(k)
            pruned.extend(keys)
        for v in range(previous, oldest):
            batch.delete(ROOT + _v8(v))
        if st.stale and st.version > oldest:
            batch.put(STALE + ver8, _pack_keys(st.stale))
        batch.put(META, ver8 + _v8(oldest))
        batch.write()

        self._staged = None
        self._version = st.version
        self._oldest = oldest
        self._root = st.root
        self._cache.discard(st.stale)
        self._cache.discard(pruned)
        self._cache.add(st.nodes, latest=True)

    # -- history and proofs ------------------------------------------------------------

    def available_versions(self) -> tuple[int, int]:
        """(oldest kept, latest); version 0 is the empty tree."""
        return self._oldest, self._version

    def root_at(self, version: int) -> bytes:
        return ref_hash(self._root_ref(version))

    def items_at(self, version: int) -> list[tuple[bytes, bytes]]:
        """Every (key, value) of a kept version, sorted by key: the latest version from its table, an older
        one by walking its whole tree (every leaf read once, bypassing the node cache that blocks use)."""
        root = self._root_ref(version)
        if version == self._version:
            return list(self.iterate())
        load = partial(self._load, cache=False)
        items = [self._read_leaf(ref, None) for ref in leaf_refs(root, load)]
        items.sort(key=itemgetter(0))
        return items

    def state_at(self, version: int) -> CommitStore | VersionView:
        """A read-only view of a kept version for ``CacheKV``/``Context``: the store itself at the latest
        version, else that version's ``items_at`` in memory. For reading a whole past state (export)."""
        self._root_ref(version)
        return self if version == self._version else VersionView(version, self.items_at(version))

    def get_at(self, key: bytes, version: int) -> bytes | None:
        check_key(key)
        root = self._root_ref(version)
        if version == self._version:
            return self._db.get(LATEST + key)
        kh = sha256(key).digest()
        _, end = walk(root, kh, self._load)
        if end[40:] != kh:
            return None
        return self._read_leaf(end, key)[1]

    def prove(self, key: bytes, version: int) -> tuple[bytes | None, Proof]:
        """The value of ``key`` at ``version`` (None if absent) and a proof of it against
        ``root_at(version)``."""
        check_key(key)
        root = self._root_ref(version)
        kh = sha256(key).digest()
        levels, end = walk(root, kh, self._load)
        hx = kh.hex()
        path = []
        for depth, node in enumerate(levels):
            hashes = list(node_hashes(node))
            hashes[NIBBLE[hx[depth]]] = ZERO
            path.append(tuple(hashes))
        if not end:
            return None, Proof(tuple(path), None)
        leaf_kh = end[40:]
        _, value = self._read_leaf(end, key if leaf_kh == kh else None)
        proof = Proof(tuple(path), (leaf_kh, sha256(value).digest()))
        return (value if leaf_kh == kh else None), proof

    def compact(self) -> None:
        """Compact the whole LevelDB, e.g. after a bulk load, so reads and writes stop
        paying for the compaction backlog."""
        self._db.compact_range()

    def close(self) -> None:
        self._staged = None
        self._cache = _NodeCache(0)
        self._db.close()

    def __enter__(self) -> CommitStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------

    def _root_ref(self, version: int) -> bytes:
        if type(version) is not int or not self._oldest <= version <= self._version:
            raise VersionUnavailableError(
                f"version {version!r} not available: kept versions are {self._oldest}..{self._version}"
            )
        if version == self._version:
            return self._root
        return self._read_root(version)

    def _read_root(self, version: int) -> bytes:
        if version == 0:
            return b""
        data = self._db.get(ROOT + _v8(version))
        if data is None:
            raise VersionUnavailableError(f"no root recorded for version {version}")
        return check_ref(data)

    def _read_leaf(self, ref: bytes, expect_key: bytes | None) -> tuple[bytes, bytes]:
        assert len(ref) == LEAF_REF_LEN
        data = self._db.get(leaf_key(ref))
        if data is None:
            raise RuntimeError(f"store corrupt: missing leaf node {ref[40:].hex()}")
        key, value = decode_leaf(data)
        if expect_key is not None and key != expect_key:
            raise RuntimeError("store corrupt: leaf holds another key")
        return key, value

    def _load(self, node_key: bytes, cache: bool = True) -> bytes:
        """Committed internal node by DB key, through the cache; ``cache=False`` leaves a miss out of it
        (a whole-tree walk would only evict the nodes blocks use)."""
        node = self._cache.nodes.get(node_key)
        if node is not None:
            return node
        data = self._db.get(node_key)
        if data is None:
            raise RuntimeError(f"store corrupt: missing internal node {node_key.hex()}")
        self.cache_misses += 1
        node = decode_internal(data)
        if cache:
            self._cache.add({node_key: node}, latest=False)
        return node
