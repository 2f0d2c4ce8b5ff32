"""Jellyfish-style sparse Merkle tree, radix 16, over sha256(key).

This module holds the hash rules, the byte formats of nodes and the batch update; it knows
nothing about LevelDB beyond node keys. See README.md in this package for the spec.

In memory (hot path, so plain tuples and lists rather than classes):

* an *entry* is a reference to a child: ``(hash, version8, key_hash)`` where ``version8`` is
  the 8-byte big-endian version the child node was written at and ``key_hash`` is the
  leaf's sha256(key), or ``None`` when the child is an internal node;
* a *node* (internal) is ``(hashes, encs, present, leaves)``: 16 child hashes (ZERO where
  empty), 16 child encodings (``hash + version8 [+ key_hash]``, ``b""`` where empty) and two
  16-bit masks (bit i = slot i). Cached nodes are shared: never mutate one, copy it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
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

Entry = tuple[bytes, bytes, Optional[bytes]]
Node = tuple[list[bytes], list[bytes], int, int]
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


def root_hash(root: Entry | None) -> bytes:
    return ZERO if root is None else root[0]


def encode_entry(entry: Entry | None) -> bytes:
    """Child reference bytes: 40 (internal) or 72 (leaf) bytes; b"" for no child."""
    if entry is None:
        return b""
    return entry[0] + entry[1] + (entry[2] or b"")


def decode_entry(data: bytes) -> Entry | None:
    if not data:
        return None
    if len(data) == 40:
        return data[:32], data[32:40], None
    if len(data) == 72:
        return data[:32], data[32:40], data[40:]
    raise ValueError(f"corrupt child reference of {len(data)} bytes")


def encode_leaf(key: bytes, value: bytes) -> bytes:
    """Leaf node: u32 key length, key, value (the value runs to the end)."""
    return _KEY_LEN.pack(len(key)) + key + value


def decode_leaf(data: bytes) -> tuple[bytes, bytes]:
    (n,) = _KEY_LEN.unpack_from(data)
    if 4 + n > len(data):
        raise ValueError("corrupt leaf node")
    return data[4 : 4 + n], data[4 + n :]


def encode_internal(node: Node) -> bytes:
    """u16 present mask, u16 leaf mask, then each present child's reference in slot order."""
    return _MASKS.pack(node[2], node[3]) + b"".join(node[1])


def decode_internal(data: bytes) -> Node:
    present, leaves = _MASKS.unpack_from(data)
    hashes = [ZERO] * 16
    encs = [b""] * 16
    o = 4
    for s in _SLOTS[present]:
        n = o + (72 if leaves >> s & 1 else 40)
        e = data[o:n]
        encs[s] = e
        hashes[s] = e[:32]
        o = n
    if o != len(data) or leaves & ~present:
        raise ValueError("corrupt internal node")
    return hashes, encs, present, leaves


def internal_key(version8: bytes, path: str) -> bytes:
    return INTERNAL_PREFIX + version8 + path.encode()


def leaf_key(version8: bytes, key_hash: bytes) -> bytes:
    return LEAF_PREFIX + version8 + key_hash


def child(node: Node, slot: int) -> Entry | None:
    e = node[1][slot]
    if not e:
        return None
    return e[:32], e[32:40], e[40:] or None


def prepare_updates(changes: Mapping[bytes, bytes | None]) -> list[Update]:
    """Hash a block's changes and sort them by key hash (the tree's order).

    Raises ValueError for an empty or non-bytes key or a value that is neither bytes nor None.
    """
    ups: list[Update] = []
    append = ups.append
    for key, value in changes.items():
        if not key or type(key) is not bytes:
            raise ValueError(f"keys must be non-empty bytes, got {key!r}")
        kh = sha256(key).digest()
        if value is None:
            append((kh.hex(), kh, None, None))
        elif type(value) is bytes:
            lh = sha256(LEAF_TAG + kh + sha256(value).digest()).digest()
            append((kh.hex(), kh, lh, _KEY_LEN.pack(len(key)) + key + value))
        else:
            raise ValueError(f"values must be bytes or None, got {type(value).__name__}")
    ups.sort(key=_first)
    return ups


class BatchUpdate:
    """Builds version ``version8`` of the tree from the previous root and one sorted batch.

    Only paths holding updates are visited: the update list is split by nibble at each
    level, so every touched internal node is loaded once, rewritten once and hashed once.
    New node bytes go to ``put`` (a write batch); the decoded new nodes are kept in
    ``nodes`` for the cache, and the DB keys of replaced or deleted nodes in ``stale``.
    Leaves are keyed by key hash, not position, so moving a leaf up or down the tree
    (split or collapse) rewrites only its parent, never the leaf itself.
    """

    __slots__ = ("version8", "load", "put", "nodes", "stale")

    def __init__(self, version8: bytes, load: Callable[[bytes], Node], put: Callable[[bytes, bytes], None]) -> None:
        self.version8 = version8
        self.load = load
        self.put = put
        self.nodes: dict[bytes, Node] = {}
        self.stale: list[bytes] = []

    def run(self, root: Entry | None, ups: list[Update]) -> Entry | None:
        """Return the new root entry (the old one, same object, if nothing changed)."""
        if not ups:
            return root
        return self._update(root, 0, ups, 0, len(ups))

    def _new_leaf(self, u: Update) -> Entry:
        self.put(LEAF_PREFIX + self.version8 + u[1], u[3])  # type: ignore[arg-type]
        return u[2], self.version8, u[1]  # type: ignore[return-value]

    def _store(self, path: str, hashes: list[bytes], encs: list[bytes], present: int, leaves: int) -> Entry:
        key = INTERNAL_PREFIX + self.version8 + path.encode()
        self.put(key, _MASKS.pack(present, leaves) + b"".join(encs))
        self.nodes[key] = (hashes, encs, present, leaves)
        return sha256(INTERNAL_TAG + b"".join(hashes)).digest(), self.version8, None

    def _update(self, entry: Entry | None, depth: int, ups: list[Update], lo: int, hi: int) -> Entry | None:
        """New entry for the subtree at ``depth`` holding ``entry``, given ``ups[lo:hi]``."""
        if entry is None:
            if hi - lo == 1:
                u = ups[lo]
                return None if u[2] is None else self._new_leaf(u)
            items = [(u[0], self._new_leaf(u)) for u in ups[lo:hi] if u[2] is not None]
            return self._build(items, depth) if items else None
        if entry[2] is not None:
            return self._merge_leaf(entry, depth, ups, lo, hi)

        path = ups[lo][0][:depth]
        old_key = INTERNAL_PREFIX + entry[1] + path.encode()
        hashes, encs, present, leaves = self.load(old_key)
        hashes = hashes.copy()
        encs = encs.copy()
        changed = False
        i = lo
        while i < hi:
            c = ups[i][0][depth]
            j = i + 1
            while j < hi and ups[j][0][depth] == c:
                j += 1
            s = NIBBLE[c]
            bit = 1 << s
            e = encs[s]
            old = (e[:32], e[32:40], e[40:] or None) if e else None
            new = self._update(old, depth + 1, ups, i, j)
            if new is not old:
                changed = True
                if new is None:
                    hashes[s] = ZERO
                    encs[s] = b""
                    present &= ~bit
                    leaves &= ~bit
                else:
                    h = hashes[s] = new[0]
                    if new[2] is None:
                        encs[s] = h + new[1]
                        leaves &= ~bit
                    else:
                        encs[s] = h + new[1] + new[2]
                        leaves |= bit
                    present |= bit
            i = j
        if not changed:
            return entry
        self.stale.append(old_key)
        if not present:
            return None
        if present == leaves and not present & (present - 1):
            e = encs[present.bit_length() - 1]  # a lone leaf collapses upward
            return e[:32], e[32:40], e[40:]
        return self._store(path, hashes, encs, present, leaves)

    def _merge_leaf(self, entry: Entry, depth: int, ups: list[Update], lo: int, hi: int) -> Entry | None:
        """The slot holds one leaf: replace, delete or keep it, and split if keys join it."""
        kh = entry[2]
        if hi - lo == 1:
            u = ups[lo]
            if u[1] == kh:
                if u[2] == entry[0]:
                    return entry
                self.stale.append(LEAF_PREFIX + entry[1] + kh)  # type: ignore[operator]
                return None if u[2] is None else self._new_leaf(u)
            if u[2] is None:
                return entry
            items = [(kh.hex(), entry), (u[0], self._new_leaf(u))]  # type: ignore[union-attr]
            if items[1][0] < items[0][0]:
                items.reverse()
            return self._build(items, depth)

        items: list[tuple[str, Entry]] = []
        keep_old = True
        for k in range(lo, hi):
            u = ups[k]
            if u[1] == kh:
                keep_old = False
                if u[2] == entry[0]:
                    items.append((u[0], entry))
                    continue
                self.stale.append(LEAF_PREFIX + entry[1] + kh)  # type: ignore[operator]
                if u[2] is not None:
                    items.append((u[0], self._new_leaf(u)))
            elif u[2] is not None:
                items.append((u[0], self._new_leaf(u)))
        if keep_old:
            items.append((kh.hex(), entry))  # type: ignore[union-attr]
            items.sort(key=_first)
        if not items:
            return None
        return self._build(items, depth)

    def _build(self, items: list[tuple[str, Entry]], depth: int) -> Entry:
        """Canonical subtree over ``items`` (sorted by key hash hex, all under one path)."""
        n = len(items)
        if n == 1:
            return items[0][1]
        hashes = [ZERO] * 16
        encs = [b""] * 16
        present = leaves = 0
        i = 0
        while i < n:
            c = items[i][0][depth]
            j = i + 1
            while j < n and items[j][0][depth] == c:
                j += 1
            sub = self._build(items[i:j], depth + 1) if j - i > 1 else items[i][1]
            s = NIBBLE[c]
            bit = 1 << s
            h = hashes[s] = sub[0]
            if sub[2] is None:
                encs[s] = h + sub[1]
            else:
                encs[s] = h + sub[1] + sub[2]
                leaves |= bit
            present |= bit
            i = j
        return self._store(items[0][0][:depth], hashes, encs, present, leaves)


def walk(root: Entry | None, key_hash: bytes, load: Callable[[bytes], Node]) -> tuple[list[Node], Entry | None]:
    """Follow ``key_hash`` from ``root``: the internal nodes passed, and the entry where the
    path ends (None for an empty slot, else a leaf, which may hold another key)."""
    hx = key_hash.hex()
    levels: list[Node] = []
    e = root
    depth = 0
    while e is not None and e[2] is None:
        node = load(INTERNAL_PREFIX + e[1] + hx[:depth].encode())
        levels.append(node)
        e = child(node, NIBBLE[hx[depth]])
        depth += 1
    return levels, e
