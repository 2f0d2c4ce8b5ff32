"""Snapshot format 1 (README.md): a version's (key, value) leaves in key order, cut into chunks, and the
metadata that names every chunk's sha256.

Pure functions of bytes, so a snapshot's bytes depend only on the state of its version: every node that
snapshots height H writes the same chunks and the same metadata (and so the same ``Snapshot.hash``).
"""

from __future__ import annotations

import hashlib
import struct
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from operator import add

FORMAT = 1
CHUNK_BYTES = 1 << 20
"""A chunk's payload stops growing past this; one item larger than it makes a chunk of its own."""
HASH_BYTES = 32
_HEADER = struct.Struct(">QQ32s")  # height, item count, app hash
_LEN = struct.Struct(">I")
_ITEM_FRAME = 2 * _LEN.size  # the two lengths an item adds to its key and value


def chunk_hash(chunk: bytes) -> bytes:
    return hashlib.sha256(chunk).digest()


@dataclass(frozen=True, slots=True)
class Metadata:
    """What ``Snapshot.metadata`` holds: the height, the number of items, the app hash recorded when the
    snapshot was taken (the root of version ``height``; a restore from a peer checks CometBFT's trusted
    hash, a local restore this one) and the chunks' hashes in order."""

    height: int
    items: int
    app_hash: bytes
    chunk_hashes: tuple[bytes, ...]

    def encode(self) -> bytes:
        """``u64 BE height ‖ u64 BE items ‖ app hash (32) ‖ chunk hashes (32 each)``: fixed layout, one
        encoding per value."""
        return _HEADER.pack(self.height, self.items, self.app_hash) + b"".join(self.chunk_hashes)

    @classmethod
    def decode(cls, raw: bytes) -> Metadata:
        """The metadata ``raw`` encodes; ValueError if it is not one ``encode`` could have written."""
        body = len(raw) - _HEADER.size
        if body < HASH_BYTES or body % HASH_BYTES:
            raise ValueError(f"snapshot metadata of {len(raw)} bytes is malformed")
        height, items, app_hash = _HEADER.unpack_from(raw)
        hashes = tuple(raw[o : o + HASH_BYTES] for o in range(_HEADER.size, len(raw), HASH_BYTES))
        if height < 1 or items < len(hashes):
            raise ValueError(f"snapshot metadata names height {height}, {items} items in {len(hashes)} chunks")
        return cls(height, items, app_hash, hashes)

    @property
    def hash(self) -> bytes:
        """``Snapshot.hash``: sha256 of the encoded metadata."""
        return hashlib.sha256(self.encode()).digest()


def encode_item(key: bytes, value: bytes) -> bytes:
    return _LEN.pack(len(key)) + key + _LEN.pack(len(value)) + value


def chunk_items(
    batches: Iterable[Sequence[tuple[bytes, bytes]]], limit: int = CHUNK_BYTES
) -> Iterator[tuple[bytes, int]]:
    """Each chunk of the items ``batches`` hold (in order, sorted by key) and how many items it holds: items
    are added while the payload stays within ``limit``; every chunk holds at least one item. The chunks do
    not depend on how the items are batched; a batch is framed with a few C-level calls rather than Python
    operations per item, so the writer holds the GIL, which consensus needs too, as briefly as it can."""
    parts: list[bytes] = []  # the framed runs of the chunk being made
    size = count = 0
    for batch in batches:
        if not batch:
            continue
        keys, values = zip(*batch)
        ends = list(accumulate(map(add, map(add, map(len, keys), map(len, values)), repeat(_ITEM_FRAME))))
        start, base = 0, 0  # the first item not taken yet, and the framed bytes of the items before it
        while start < len(batch):
            stop = bisect_right(ends, limit - size + base, start)  # the items from start to stop fit
            if stop == start and not count:
                stop = start + 1  # an item larger than the limit makes a chunk alone
            if stop > start:
                parts.append(_frame(keys[start:stop], values[start:stop]))
                count += stop - start
                size += ends[stop - 1] - base
                start, base = stop, ends[stop - 1]
            if start < len(batch):  # the next item does not fit: this chunk is complete
                yield b"".join(parts), count
                parts, size, count = [], 0, 0
    if count:
        yield b"".join(parts), count


def _frame(keys: Sequence[bytes], values: Sequence[bytes]) -> bytes:
    """``encode_item`` of every (key, value), back to back."""
    pack = _LEN.pack
    return b"".join(chain.from_iterable(zip(map(pack, map(len, keys)), keys, map(pack, map(len, values)), values)))


def decode_chunk(chunk: bytes) -> list[tuple[bytes, bytes]]:
    """The items of one chunk; ValueError if it is empty, truncated, holds an empty key or value, or its keys
    are not strictly increasing."""
    items: list[tuple[bytes, bytes]] = []
    unpack = _LEN.unpack_from
    o, end = 0, len(chunk)
    previous = b""
    while o < end:
        if o + 4 > end:
            raise ValueError("chunk truncated in a key length")
        (n,) = unpack(chunk, o)
        key = chunk[o + 4 : o + 4 + n]
        o += 4 + n
        if o + 4 > end:
            raise ValueError("chunk truncated in a key or value length")
        (m,) = unpack(chunk, o)
        value = chunk[o + 4 : o + 4 + m]
        o += 4 + m
        if o > end:
            raise ValueError("chunk truncated in a value")
        if not key or not value:
            raise ValueError("chunk holds an empty key or value")
        if items and key <= previous:
            raise ValueError("chunk keys are not strictly increasing")
        items.append((key, value))
        previous = key
    if not items:
        raise ValueError("chunk holds no item")
    return items
