"""Snapshots on disk: one folder per snapshot under the node's ``data/snapshots/``, named
``<height>-<format>``, holding ``metadata`` and one file per chunk (``0``, ``1``, …).

A snapshot is written into ``.tmp-<height>-<format>`` and renamed into place once every file is synced, so a
crash mid-write never leaves a partial snapshot listed (the node removes leftovers when it starts).
Reads touch files only: ``gonkad snapshots list`` works beside a running node.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from sdk.snapshots.format import CHUNK_BYTES, FORMAT, Metadata, chunk_hash, chunk_items

METADATA_FILE = "metadata"
BATCH_ITEMS = 512
"""Items read and framed between two calls of ``save``'s ``between_batches``: about a millisecond of work."""
_NAME = re.compile(r"^([1-9][0-9]*)-([0-9]+)$")


class SnapshotCancelled(Exception):
    """The writer was asked to stop (the node is shutting down); nothing was listed."""


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """One stored snapshot, as ABCI's ``Snapshot`` describes it."""

    height: int
    format: int
    chunks: int
    hash: bytes
    metadata: bytes


class SnapshotStore:
    """The snapshots of one node home."""

    def __init__(self, root: Path, chunk_bytes: int = CHUNK_BYTES) -> None:
        """``chunk_bytes``: the payload limit of the chunks this store writes. Peers pool a snapshot only when
        its hash is the same, so every node of a network should keep the default."""
        self.root = root
        self.chunk_bytes = chunk_bytes

    def _dir(self, height: int, format: int) -> Path:
        return self.root / f"{height}-{format}"

    def listed(self) -> list[SnapshotInfo]:
        """Every complete snapshot, newest first (height, then format, descending)."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in self.root.iterdir():
            match = _NAME.match(entry.name)
            if match:
                info = self.get(int(match[1]), int(match[2]))
                if info is not None:
                    found.append(info)
        return sorted(found, key=lambda s: (s.height, s.format), reverse=True)

    def get(self, height: int, format: int = FORMAT) -> SnapshotInfo | None:
        """The snapshot of ``height`` in ``format``; None if there is none (or its metadata is unreadable)."""
        try:
            raw = (self._dir(height, format) / METADATA_FILE).read_bytes()
            metadata = Metadata.decode(raw)
        except (OSError, ValueError):
            return None
        if metadata.height != height:
            return None
        return SnapshotInfo(height, format, len(metadata.chunk_hashes), metadata.hash, raw)

    def load_chunk(self, height: int, format: int, index: int) -> bytes:
        """Chunk ``index`` of a snapshot; empty if there is no such chunk."""
        if index < 0 or self.get(height, format) is None:
            return b""
        try:
            return (self._dir(height, format) / str(index)).read_bytes()
        except OSError:
            return b""

    def save(
        self,
        height: int,
        app_hash: bytes,
        items: Iterable[tuple[bytes, bytes]],
        between_batches: Callable[[], None] = lambda: None,
    ) -> SnapshotInfo:
        """Write the snapshot (format 1) of version ``height`` whose state is ``items`` (sorted by key) and whose
        root is ``app_hash``; an existing snapshot of that height is kept as it is (the format is a function of
        the state). ``between_batches`` is called after each batch of ``BATCH_ITEMS`` items is read, before
        it is framed and any chunk it completes written: it may rest, or raise SnapshotCancelled to stop
        (nothing is listed).
        ValueError for an empty state (a snapshot holds at least one item)."""
        existing = self.get(height, FORMAT)
        if existing is not None:
            return existing
        tmp = self.root / f".tmp-{height}-{FORMAT}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            hashes: list[bytes] = []
            count = 0
            for chunk, n in chunk_items(_batches(items, between_batches), self.chunk_bytes):
                _write_synced(tmp / str(len(hashes)), chunk)
                hashes.append(chunk_hash(chunk))
                count += n
            if not hashes:
                raise ValueError(f"the state at height {height} is empty: nothing to snapshot")
            _write_synced(tmp / METADATA_FILE, Metadata(height, count, app_hash, tuple(hashes)).encode())
            os.rename(tmp, self._dir(height, FORMAT))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _sync_dir(self.root)
        info = self.get(height, FORMAT)
        assert info is not None
        return info

    def delete(self, height: int, format: int = FORMAT) -> bool:
        """Remove a snapshot; False if there was none. It leaves the listing first (renamed away), then its
        files go."""
        folder = self._dir(height, format)
        if not folder.is_dir():
            return False
        doomed = self.root / f".del-{height}-{format}"
        shutil.rmtree(doomed, ignore_errors=True)
        os.rename(folder, doomed)
        shutil.rmtree(doomed)
        return True

    def remove_leftovers(self) -> None:
        """Remove what a writer or a delete interrupted by a crash left behind (never listed). Only while no
        snapshot is being written here: the node, at start."""
        if self.root.is_dir():
            for entry in self.root.iterdir():
                if entry.name.startswith((".tmp-", ".del-")):
                    shutil.rmtree(entry, ignore_errors=True)

    def prune(self, keep_recent: int) -> list[int]:
        """Delete all but the ``keep_recent`` newest snapshots; the heights deleted."""
        doomed = self.listed()[keep_recent:]
        for info in doomed:
            self.delete(info.height, info.format)
        return [info.height for info in doomed]


def _batches(items: Iterable[tuple[bytes, bytes]], between: Callable[[], None]) -> Iterator[list[tuple[bytes, bytes]]]:
    """``items`` in lists of ``BATCH_ITEMS``, ``between`` called after each is read."""
    it = iter(items)
    while batch := list(islice(it, BATCH_ITEMS)):
        between()
        yield batch


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
