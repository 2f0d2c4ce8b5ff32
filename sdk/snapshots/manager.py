"""Taking snapshots: after the commit of every ``interval``-th height, a background thread writes the snapshot
of that version while blocks go on.

The version is frozen on the store's thread at commit (``CommitStore.snapshot()``: a LevelDB snapshot of the
latest-state table, taken in microseconds); the worker thread then reads it, chunks, hashes and writes. Later
commits and pruning change nothing the worker reads, and the event loop never waits for it; the worker rests
between chunks as long as it worked (``paced``), so it holds the GIL at most about half the time. One job at a
time: a height whose turn comes while the previous job still runs is skipped, with a log line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sdk.snapshots.store import SnapshotCancelled, SnapshotInfo, SnapshotStore
from sdk.store.commitstore import CommitStore, Snapshot, VersionSnapshot

log = logging.getLogger("gonkad.snapshots")


def write_snapshot(
    snapshots: SnapshotStore,
    frozen: Snapshot | VersionSnapshot,
    app_hash: bytes,
    between_chunks: Callable[[], None] = lambda: None,
) -> SnapshotInfo:
    """The snapshot of the frozen version ``frozen`` (root ``app_hash``) written to ``snapshots``; closes
    ``frozen`` (so call it on the thread that reads it). ``between_chunks``: as ``SnapshotStore.save``'s."""
    with frozen:
        return snapshots.save(frozen.version, app_hash, frozen.iterate(), between_chunks)


def paced(stop: threading.Event) -> Callable[[], None]:
    """``between_chunks`` for a node's writer: stop once ``stop`` is set, else rest as long as the last chunk
    took to make. The writer's Python work holds the GIL, which consensus needs too; resting half the time
    leaves blocks most of it (the snapshot takes about twice as long)."""
    last = time.monotonic()

    def pace() -> None:
        nonlocal last
        if stop.wait(time.monotonic() - last):
            raise SnapshotCancelled("the node is stopping")
        last = time.monotonic()

    return pace


class SnapshotManager:
    """The node's snapshots: the store that serves them, and the job that takes them after commits."""

    def __init__(self, snapshots: SnapshotStore, interval: int, keep_recent: int, tamper_chunks: bool = False) -> None:
        """``interval``: heights that are multiples of it get a snapshot (0: none are taken, stored ones are
        still served). ``keep_recent``: snapshots kept, older ones deleted after each new one.
        ``tamper_chunks``: TEST ONLY, every chunk is served with its first byte changed, as a lying peer's."""
        if interval < 0 or keep_recent < 1:
            raise ValueError("snapshot interval must be >= 0 and keep_recent >= 1")
        self.snapshots = snapshots
        self.tamper_chunks = tamper_chunks
        self.interval = interval
        self.keep_recent = keep_recent
        self._job: threading.Thread | None = None
        self._stop = threading.Event()
        snapshots.remove_leftovers()  # this manager is the one writer from here on

    def load_chunk(self, height: int, format: int, index: int) -> bytes:
        """A chunk as this node serves it to peers (empty if it has no such chunk)."""
        chunk = self.snapshots.load_chunk(height, format, index)
        if self.tamper_chunks and chunk:
            return bytes([chunk[0] ^ 0xFF]) + chunk[1:]
        return chunk

    @property
    def busy(self) -> bool:
        return self._job is not None and self._job.is_alive()

    def after_commit(self, store: CommitStore) -> None:
        """Called on the store's thread right after a commit: start the snapshot of that version if its height
        is due and no job is running."""
        height = store.version
        if not self.interval or height % self.interval or self._stop.is_set():
            return
        if self.busy:
            log.info("snapshot at height %d skipped: the previous one is still being written", height)
            return
        frozen = store.snapshot()
        self._job = threading.Thread(
            target=self._take, args=(frozen, store.root_hash), name=f"snapshot-{height}", daemon=True
        )
        self._job.start()

    def _take(self, frozen: Snapshot, app_hash: bytes) -> None:
        try:
            info = write_snapshot(self.snapshots, frozen, app_hash, paced(self._stop))
            pruned = self.snapshots.prune(self.keep_recent)
        except SnapshotCancelled:
            log.info("snapshot at height %d cancelled", frozen.version)
            return
        except Exception:  # noqa: BLE001 - a failed snapshot must not stop the node; the next one retries
            log.exception("snapshot at height %d failed", frozen.version)
            return
        log.info(
            "snapshot at height %d: %d chunks, hash %s%s",
            info.height,
            info.chunks,
            info.hash.hex().upper(),
            f"; deleted heights {pruned}" if pruned else "",
        )

    def wait(self, timeout: float | None = None) -> None:
        """Until the running job (if any) has finished."""
        if self._job is not None:
            self._job.join(timeout)

    def close(self) -> None:
        """Stop taking snapshots: the running job stops at its next chunk, and is waited for (it reads the
        store, which must stay open until then)."""
        self._stop.set()
        self.wait()
