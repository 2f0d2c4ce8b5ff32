"""Taking snapshots: after the commit of every ``interval``-th height, a background thread writes the snapshot
of that version while blocks go on.

The version is frozen on the store's thread at commit (``CommitStore.snapshot()``: a LevelDB snapshot of the
latest-state table, taken in microseconds); the worker thread then reads it, chunks, hashes and writes. Later
commits and pruning change nothing the worker reads, and the event loop never waits for it; the worker rests
between batches of items REST_RATIO times as long as it worked (``paced``), so it holds the GIL about 1/16 of
the time. One job at a time: a height whose turn comes while the previous job still runs is skipped, with a
log line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sdk.snapshots.store import SnapshotCancelled, SnapshotInfo, SnapshotStore
from sdk.store.commitstore import CommitStore, Snapshot, VersionSnapshot

log = logging.getLogger("gonkad.snapshots")

REST_RATIO = 15.0
"""A node's writer rests this many times as long as it works: it holds the GIL about 1/16 of the time, and a
large snapshot takes about 20 times as long as unpaced. At 1M keys (bench/bench_snapshots.py) the blocks beside
it took 1.03-1.06x their time (8: 1.03-1.11x; unpaced: 1.47-1.63x)."""
FREE_WORK_S = 0.05
"""The writer's first CPU seconds, unpaced: a small state's snapshot is written at once."""


def write_snapshot(
    snapshots: SnapshotStore,
    frozen: Snapshot | VersionSnapshot,
    app_hash: bytes,
    between_batches: Callable[[], None] = lambda: None,
) -> SnapshotInfo:
    """The snapshot of the frozen version ``frozen`` (root ``app_hash``) written to ``snapshots``; closes
    ``frozen`` (so call it on the thread that reads it). ``between_batches``: as ``SnapshotStore.save``'s."""
    with frozen:
        return snapshots.save(frozen.version, app_hash, frozen.iterate(), between_batches)


def paced(stop: threading.Event, rest_ratio: float = REST_RATIO) -> Callable[[], None]:
    """``between_batches`` for a node's writer (make it on the writer's thread): stop once ``stop`` is set;
    past the first ``FREE_WORK_S`` of this thread's CPU time, rest ``rest_ratio`` times as long as it worked
    (fsync and waits for the GIL are not work). A batch is about a millisecond of work, well under the
    interpreter's switch interval (5 ms), so a block that wants the GIL back waits at most that long."""
    begun = time.thread_time()
    rested = 0.0

    def pace() -> None:
        nonlocal rested
        owed = (time.thread_time() - begun - FREE_WORK_S) * rest_ratio - rested
        if stop.wait(max(owed, 0.0)):
            raise SnapshotCancelled("the node is stopping")
        rested += max(owed, 0.0)

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
        """Stop taking snapshots: the running job stops at its next batch, and is waited for (it reads the
        store, which must stay open until then)."""
        self._stop.set()
        self.wait()
