"""Jellyfish-style sparse Merkle tree, radix 16, over sha256(key).

This module holds the hash rules, the byte formats of nodes and the batch update; it knows
nothing about LevelDB beyond node keys. See README.md in this package for the spec.

The hot path works on bytes only (no per-node Python objects, nothing for the garbage
collector to track):

* a child *reference* ("ref") is ``hash + version8`` (internal node, 40 bytes) or
  ``hash + version8 + key_hash`` (leaf, 72 bytes), where version8 is the 8-byte big-endian
  version the child was written at; ``b""`` means no child. The same bytes are stored in
  the parent node and in a version's root record.
* an internal node in memory is ``0x01 || 16 child hashes || stored form`` where the stored
  form (the LevelDB value) is ``u16 present mask || u16 leaf mask || refs of the present
  children in slot order`` (bit i = slot i). So ``node[:513]`` is exactly the preimage of
  its hash, and ``node[513:]`` what is written to disk.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping
from hashlib import sha256
from operator import itemgetter
from typing import Optional

ZERO = bytes(32)
"""Hash of an empty subtree and root of the empty tree."""

LEAF_TAG = b"\x00"
INTERNAL_TAG = b"\x01"
INTERNAL_PREFIX = b"n"
"""DB key of an internal node: ``b"n" + version8 + nibble path as lowercase ASCII hex``."""
LEAF_PREFIX = b"k"
"""DB key of a leaf node: ``b"k" + version8 + key_hash`` (its full 64-nibble path)."""
INTERNAL_REF_LEN = 40
LEAF_REF_LEN = 72

HASHED = 513
"""Length of a node's hash preimage (tag and 16 child hashes); its stored form follows."""
REFS_AT = HASHED + 4
_NO_HASHES = [ZERO] * 16
Update = tuple[str, bytes, Optional[bytes], Optional[bytes]]
"""``(key_hash hex, key_hash, leaf_hash or None for delete, encoded leaf node or None)``."""

NIBBLE = {c: i for i, c in enumerate("0123456789abcdef")}
_MASKS = struct.Struct(">HH")
_KEY_LEN = struct.Struct(">I")
_first = itemgetter(0)


class _SlotTable(dict[int, tuple[int, ...]]):
    """present-mask -> slots in order; filled on demand (most masks never occur)."""

    def __missing__(self, mask: int) -> tuple[int, ...]:
        slots = tuple(i for i in range(16) if mask >> i & 1)
        self[mask] = slots
        return slots


_SLOTS = _SlotTable()


def leaf_hash(key_hash: bytes, value_hash: bytes) -> bytes:
    """H(0x00 || key_hash || value_hash)."""
    return sha256(LEAF_TAG + key_hash + value_hash).digest()


def internal_hash(child_hashes: list[bytes] | tuple[bytes, ...]) -> bytes:
    """H(0x01 || 16 child hashes), ZERO standing for an empty slot."""
    return sha256(INTERNAL_TAG + b"".join(child_hashes)).digest()


def ref_hash(ref: bytes) -> bytes:
    """Hash of the subtree a ref points to (ZERO for no child)."""
    return ref[:32] if ref else ZERO


def check_ref(ref: bytes) -> bytes:
    if len(ref) not in (0, INTERNAL_REF_LEN, LEAF_REF_LEN):
        raise ValueError(f"corrupt child reference of {len(ref)} bytes")
    return ref


def decode_leaf(data: bytes) -> tuple[bytes, bytes]:
    """(key, value) of a stored leaf node: u32 key length, key, value to the end."""
    (n,) = _KEY_LEN.unpack_from(data)
    if 4 + n > len(data):
        raise ValueError("corrupt leaf node")
    return data[4 : 4 + n], data[4 + n :]


def decode_internal(data: bytes) -> bytes:
    """In-memory node from its stored form (u16 present, u16 leaves, present refs)."""
    present, leaves = _MASKS.unpack_from(data)
    hashes = _NO_HASHES.copy()
    o = 4
    for s in _SLOTS[present]:
        hashes[s] = data[o : o + 32]
        o += LEAF_REF_LEN if leaves >> s & 1 else INTERNAL_REF_LEN
    if o != len(data) or leaves & ~present:
        raise ValueError("corrupt internal node")
    return INTERNAL_TAG + b"".join(hashes) + data


def node_hashes(node: bytes) -> tuple[bytes, ...]:
    """The 16 child hashes of an in-memory node."""
    return tuple(node[i : i + 32] for i in range(1, HASHED, 32))


def node_child(node: bytes, slot: int) -> bytes:
    """The ref in ``slot`` of an in-memory node (b"" if empty)."""
    present, leaves = _MASKS.unpack_from(node, HASHED)
    bit = 1 << slot
    if not present & bit:
        return b""
    below = bit - 1
    o = REFS_AT + INTERNAL_REF_LEN * (present & below).bit_count() + 32 * (leaves & below).bit_count()
    return node[o : o + (LEAF_REF_LEN if leaves & bit else INTERNAL_REF_LEN)]


def internal_key(ref: bytes, path: str) -> bytes:
    """DB key of the internal node ``ref`` points to, found at nibble ``path``."""
    return INTERNAL_PREFIX + ref[32:40] + path.encode()


def leaf_key(ref: bytes) -> bytes:
    """DB key of the leaf node ``ref`` points to."""
    return LEAF_PREFIX + ref[32:]


def prepare_updates(changes: Mapping[bytes, bytes | None]) -> list[Update]:
    """Hash a block's changes and sort them by key hash (the tree's order).

    Raises ValueError for an empty or non-bytes key or a value that is neither bytes nor None.
    """
    ups: list[Update] = []
    append = ups.append
    pack = _KEY_LEN.pack
    for key, value in changes.items():
        if not key or type(key) is not bytes:
            raise ValueError(f"keys must be non-empty bytes, got {key!r}")
        kh = sha256(key).digest()
        if value is None:
            append((kh.hex(), kh, None, None))
        elif type(value) is bytes:
            lh = sha256(LEAF_TAG + kh + sha256(value).digest()).digest()
            append((kh.hex(), kh, lh, pack(len(key)) + key + value))
        else:
            raise ValueError(f"values must be bytes or None, got {type(value).__name__}")
    ups.sort(key=_first)
    return ups


class BatchUpdate:
    """Builds version ``version8`` of the tree from the previous root and one sorted batch.

    Only paths holding updates are visited: the update list is split by nibble at each
    level, so every touched internal node is loaded once, rewritten once and hashed once.
    New node bytes go to ``put`` (a write batch); the new nodes are kept in ``nodes`` for
    the cache, and the DB keys of replaced or deleted nodes in ``stale``. Leaves are keyed
    by key hash, not position, so a leaf moving up or down the tree (split or collapse)
    rewrites only its parent, never the leaf itself.
    """

    __slots__ = ("version8", "cache", "load", "put", "nodes", "stale")

    def __init__(
        self,
        version8: bytes,
        cache: Mapping[bytes, bytes],
        load: Callable[[bytes], bytes],
        put: Callable[[bytes, bytes], None],
    ) -> None:
        """``cache``: committed nodes by DB key, looked up first; ``load``: reads a miss."""
        self.version8 = version8
        self.cache = cache
        self.load = load
        self.put = put
        self.nodes: dict[bytes, bytes] = {}
        self.stale: list[bytes] = []

    def run(self, root: bytes, ups: list[Update]) -> bytes:
        """Return the new root ref (the old object itself if nothing changed)."""
        if not ups:
            return root
        return self._update(root, 0, ups, 0, len(ups))

    def _new_leaf(self, u: Update) -> bytes:
        ref = u[2] + self.version8 + u[1]  # type: ignore[operator]
        self.put(LEAF_PREFIX + ref[32:], u[3])  # type: ignore[arg-type]
        return ref

    def _store(self, path: str, hashes: bytes, present: int, leaves: int, refs: bytes) -> bytes:
        """Write a node at ``path`` (``hashes``: the 16 child hashes joined); return its ref."""
        v8 = self.version8
        key = INTERNAL_PREFIX + v8 + path.encode()
        stored = _MASKS.pack(present, leaves) + refs
        self.put(key, stored)
        pre = INTERNAL_TAG + hashes
        self.nodes[key] = pre + stored
        return sha256(pre).digest() + v8

    def _update(self, ref: bytes, depth: int, ups: list[Update], lo: int, hi: int) -> bytes:
        """New ref for the subtree at ``depth`` now holding ``ref``, given ``ups[lo:hi]``."""
        if len(ref) != INTERNAL_REF_LEN:
            if hi - lo == 1:
                return self._single(ref, depth, ups[lo])
            return self._merge(ref, depth, ups, lo, hi)

        path = ups[lo][0][:depth]
        old_key = INTERNAL_PREFIX + ref[32:40] + path.encode()
        node = self.cache.get(old_key) or self.load(old_key)
        present, leaves = _MASKS.unpack_from(node, HASHED)
        hashes = node[1:HASHED]
        refs = node[REFS_AT:]
        changed = False
        i = lo
        while i < hi:
            c = ups[i][0][depth]
            j = i + 1
            while j < hi and ups[j][0][depth] == c:
                j += 1
            s = NIBBLE[c]
            bit = 1 << s
            below = bit - 1
            o = INTERNAL_REF_LEN * (present & below).bit_count() + 32 * (leaves & below).bit_count()
            if present & bit:
                old = refs[o : o + (LEAF_REF_LEN if leaves & bit else INTERNAL_REF_LEN)]
            else:
                old = b""
            if j - i == 1 and len(old) != INTERNAL_REF_LEN:
                u = ups[i]
                if old or u[2] is None:
                    new = self._single(old, depth + 1, u)
                else:  # insert into an empty slot, the commonest case: inlined
                    new = u[2] + self.version8 + u[1]
                    self.put(LEAF_PREFIX + new[32:], u[3])
            else:
                new = self._update(old, depth + 1, ups, i, j)
            if new is not old:
                changed = True
                refs = refs[:o] + new + refs[o + len(old) :]
                h = 32 * s
                hashes = hashes[:h] + (new[:32] if new else ZERO) + hashes[h + 32 :]
                if new:
                    present |= bit
                    if len(new) == LEAF_REF_LEN:
                        leaves |= bit
                    else:
                        leaves &= ~bit
                else:
                    present &= ~bit
                    leaves &= ~bit
            i = j
        if not changed:
            return ref
        self.stale.append(old_key)
        if not present:
            return b""
        if present == leaves and not present & (present - 1):
            return refs  # a lone leaf collapses upward
        return self._store(path, hashes, present, leaves, refs)

    def _single(self, ref: bytes, depth: int, u: Update) -> bytes:
        """One update meeting an empty slot or a leaf."""
        if not ref:
            return ref if u[2] is None else self._new_leaf(u)
        kh = ref[40:]
        if kh == u[1]:
            if u[2] == ref[:32]:
                return ref  # same value
            self.stale.append(LEAF_PREFIX + ref[32:])
            return b"" if u[2] is None else self._new_leaf(u)
        if u[2] is None:
            return ref
        items = [(kh.hex(), ref), (u[0], self._new_leaf(u))]
        if items[1][0] < items[0][0]:
            items.reverse()
        return self._build(items, depth)

    def _merge(self, ref: bytes, depth: int, ups: list[Update], lo: int, hi: int) -> bytes:
        """Several updates meeting an empty slot or a leaf: the subtree of the survivors."""
        kh = ref[40:]
        items: list[tuple[str, bytes]] = []
        keep_old = bool(ref)
        for k in range(lo, hi):
            u = ups[k]
            if u[1] == kh:
                keep_old = False
                if u[2] == ref[:32]:
                    items.append((u[0], ref))
                    continue
                self.stale.append(LEAF_PREFIX + ref[32:])
            if u[2] is not None:
                items.append((u[0], self._new_leaf(u)))
        if keep_old:
            items.append((kh.hex(), ref))
            items.sort(key=_first)
        if not items:
            return b""
        return self._build(items, depth)

    def _build(self, items: list[tuple[str, bytes]], depth: int) -> bytes:
        """Canonical subtree over ``items`` (sorted by key hash hex, all under one path)."""
        n = len(items)
        if n == 1:
            return items[0][1]
        hashes = _NO_HASHES.copy()
        refs = []
        present = leaves = 0
        i = 0
        while i < n:
            c = items[i][0][depth]
            j = i + 1
            while j < n and items[j][0][depth] == c:
                j += 1
            sub = self._build(items[i:j], depth + 1) if j - i > 1 else items[i][1]
            s = NIBBLE[c]
            refs.append(sub)
            hashes[s] = sub[:32]
            present |= 1 << s
            if len(sub) == LEAF_REF_LEN:
                leaves |= 1 << s
            i = j
        return self._store(items[0][0][:depth], b"".join(hashes), present, leaves, b"".join(refs))


def walk(root: bytes, key_hash: bytes, load: Callable[[bytes], bytes]) -> tuple[list[bytes], bytes]:
    """Follow ``key_hash`` from ``root``: the internal nodes passed, and the ref where the
    path ends (b"" for an empty slot, else a leaf, which may hold another key)."""
    hx = key_hash.hex()
    levels: list[bytes] = []
    ref = root
    depth = 0
    while len(ref) == INTERNAL_REF_LEN:
        node = load(internal_key(ref, hx[:depth]))
        levels.append(node)
        ref = node_child(node, NIBBLE[hx[depth]])
        depth += 1
    return levels, ref


def leaf_refs(root: bytes, load: Callable[[bytes], bytes]) -> Iterator[bytes]:
    """Every leaf ref of the tree at ``root``, in key-hash order: a whole version's contents, which the
    latest-state table holds only for the latest version."""
    stack = [(root, "")]
    while stack:
        ref, path = stack.pop()
        if len(ref) == LEAF_REF_LEN:
            yield ref
        elif ref:
            node = load(internal_key(ref, path))
            for slot in range(15, -1, -1):  # pushed in reverse, so popped in slot order
                child = node_child(node, slot)
                if child:
                    stack.append((child, path + "0123456789abcdef"[slot]))
