"""State sync against replay, and what taking a snapshot costs the blocks beside it (issue #30).

1. **Replay**: a state of --keys keys made by --blocks blocks of equal size (32-byte keys, --value-bytes values;
   every block also rewrites 1% of the keys already there), applied and committed one by one into an empty
   store: the store's share of replaying them (a node replaying the chain also runs every transaction, so
   this is a lower bound). Bytes: the blocks' changes (keys + values), a lower bound on the blocks fetched.
2. **State sync**: the snapshot of the last version written to disk (``write_snapshot``, unpaced, as
   ``gonkad snapshots export``; then by the node's paced job, no blocks beside it), then restored into an empty
   store through ``Restore.offer`` / ``apply_chunk`` (what ABCI's OfferSnapshot / ApplySnapshotChunk run), the
   root checked. Bytes: chunks + metadata.
3. **Blocks beside a snapshot**: blocks of --block-keys rewritten keys, each timed (apply + commit), in three
   arms taking turns block by block, so that all three see the same machine: no snapshot being written
   (quiet), the node's writer (``SnapshotManager`` after a due commit: paced) and the same writer unpaced.
   Each writer is held at its next batch during the other arms' blocks. --rounds rounds of --round-blocks
   blocks per arm; reported: each round's median block per arm, and the median of the rounds' ratios.
4. **The starting commit**: apply + commit + ``after_commit`` of a due height (the version frozen, the
   writer's thread started) against apply + commit alone, alternated --starts times (each writer stopped
   before the next block).

    .venv/bin/python bench/bench_snapshots.py --keys 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.common import log  # noqa: E402
from sdk.snapshots import manager as snapshot_manager  # noqa: E402
from sdk.snapshots.format import FORMAT  # noqa: E402
from sdk.snapshots.manager import SnapshotManager, write_snapshot  # noqa: E402
from sdk.snapshots.restore import Applied, Offered, Restore  # noqa: E402
from sdk.snapshots.store import SnapshotCancelled, SnapshotStore  # noqa: E402
from sdk.store.commitstore import CommitStore, Snapshot  # noqa: E402

Changes = dict[bytes, bytes | None]
ARMS = ("quiet", "paced", "unpaced")


def make_blocks(keys: int, blocks: int, value_bytes: int, rnd: random.Random) -> list[Changes]:
    """``blocks`` blocks inserting ``keys`` keys in all, each also rewriting 1% of the keys already there."""
    made: list[Changes] = []
    existing: list[bytes] = []
    for _ in range(blocks):
        changes: Changes = {k: rnd.randbytes(value_bytes) for k in rnd.sample(existing, len(existing) // 100)}
        inserted = [rnd.randbytes(32) for _ in range(keys // blocks)]
        changes.update((k, rnd.randbytes(value_bytes)) for k in inserted)
        existing.extend(inserted)
        made.append(changes)
    return made


def replay(store: CommitStore, blocks: list[Changes]) -> float:
    t0 = time.perf_counter()
    for i, changes in enumerate(blocks):
        store.apply(changes)
        store.commit()
        if (i + 1) % max(1, len(blocks) // 5) == 0:
            log(f"  block {i + 1}/{len(blocks)}  {time.perf_counter() - t0:6.1f} s")
    return time.perf_counter() - t0


def restore(store: CommitStore, snapshots: SnapshotStore, height: int, app_hash: bytes) -> float:
    info = snapshots.get(height)
    assert info is not None
    t0 = time.perf_counter()
    offered, job = Restore.offer(store, height, FORMAT, info.chunks, info.hash, info.metadata, app_hash)
    assert offered is Offered.ACCEPT and job is not None, offered
    for index in range(info.chunks):
        applied = job.apply_chunk(index, snapshots.load_chunk(height, FORMAT, index))
        assert applied is Applied.ACCEPT, (index, applied)
    return time.perf_counter() - t0


class HeldWriter:
    """The snapshot of the store's latest version (frozen here, on the store's thread) written on a thread of
    its own that goes on only while ``run`` is set: before each batch it waits for that, then for its pacing
    (``paced`` made on its thread, as the node's job does, or none)."""

    def __init__(
        self, store: CommitStore, folder: Path, pacing: Callable[[threading.Event], Callable[[], None]] | None
    ):
        self.run, self.stop = threading.Event(), threading.Event()
        self.thread = threading.Thread(
            target=self._write, args=(SnapshotStore(folder), store.snapshot(), store.root_hash, pacing), daemon=True
        )
        self.thread.start()

    def _write(
        self,
        snapshots: SnapshotStore,
        frozen: Snapshot,
        app_hash: bytes,
        pacing: Callable[[threading.Event], Callable[[], None]] | None,
    ) -> None:
        pace = pacing(self.stop) if pacing is not None else (lambda: None)

        def between() -> None:
            self.run.wait()
            if self.stop.is_set():
                raise SnapshotCancelled("the bench is over")
            pace()

        try:
            write_snapshot(snapshots, frozen, app_hash, between)
        except SnapshotCancelled:
            pass

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def close(self) -> None:
        self.stop.set()
        self.run.set()
        self.thread.join()


def timed_block(store: CommitStore, changes: Changes) -> float:
    t0 = time.perf_counter()
    store.apply(changes)
    store.commit()
    return time.perf_counter() - t0


def blocks_beside(store: CommitStore, keys: list[bytes], root: Path, args: argparse.Namespace) -> dict[str, object]:
    rnd = random.Random(args.seed + 1)
    pacings = {"paced": snapshot_manager.paced, "unpaced": None}
    started = dict.fromkeys(pacings, 0)

    def writer(arm: str) -> HeldWriter:
        started[arm] += 1
        return HeldWriter(store, root / f"{arm}-{started[arm]}", pacings[arm])

    writers = {arm: writer(arm) for arm in pacings}
    rounds: dict[str, list[float]] = {arm: [] for arm in ARMS}
    try:
        for r in range(args.rounds):
            times: dict[str, list[float]] = {arm: [] for arm in ARMS}
            for i in range(args.round_blocks * len(ARMS)):
                arm = ARMS[(i + r) % len(ARMS)]
                changes: Changes = {k: rnd.randbytes(args.value_bytes) for k in rnd.sample(keys, args.block_keys)}
                if arm in writers:
                    if writers[arm].done:  # always a snapshot being written
                        writers[arm] = writer(arm)
                    writers[arm].run.set()
                times[arm].append(timed_block(store, changes))
                if arm in writers:
                    writers[arm].run.clear()
            for arm in ARMS:
                rounds[arm].append(statistics.median(times[arm]))
            log("  round " + " ".join(f"{arm} {rounds[arm][-1] * 1e3:.1f} ms" for arm in ARMS))
    finally:
        for held in writers.values():
            held.close()
    ratio = {arm: statistics.median(a / q for a, q in zip(rounds[arm], rounds["quiet"])) for arm in pacings}
    return {
        "block_keys": args.block_keys,
        **{f"block_ms_{arm}": [round(x * 1e3, 1) for x in rounds[arm]] for arm in ARMS},
        **{f"ratio_{arm}": round(ratio[arm], 3) for arm in pacings},
        "snapshots_started_while_timed": started,
    }


def starting_commit(store: CommitStore, keys: list[bytes], root: Path, args: argparse.Namespace) -> dict[str, object]:
    rnd = random.Random(args.seed + 2)
    plain: list[float] = []
    starting: list[float] = []
    after_commit: list[float] = []
    for i in range(args.starts):
        for due in (False, True) if i % 2 == 0 else (True, False):
            changes: Changes = {k: rnd.randbytes(args.value_bytes) for k in rnd.sample(keys, args.block_keys)}
            manager = SnapshotManager(SnapshotStore(root / f"start-{i}"), interval=1, keep_recent=1)
            t0 = time.perf_counter()
            store.apply(changes)
            store.commit()
            t1 = time.perf_counter()
            if due:
                manager.after_commit(store)
            t2 = time.perf_counter()
            manager.close()  # the writer stops at its next batch, before the next block
            (starting if due else plain).append(t2 - t0)
            if due:
                after_commit.append(t2 - t1)
    return {
        "block_plain_ms": round(statistics.median(plain) * 1e3, 2),
        "block_starting_snapshot_ms": round(statistics.median(starting) * 1e3, 2),
        "after_commit_ms": round(statistics.median(after_commit) * 1e3, 3),
        "ratio_starting_block": round(statistics.median(starting) / statistics.median(plain), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--blocks", type=int, default=100, help="blocks that make the state")
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--block-keys", type=int, default=2000, help="keys rewritten by each timed block")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--round-blocks", type=int, default=8, help="timed blocks per arm and round")
    parser.add_argument("--starts", type=int, default=10, help="starting commits timed (and as many plain)")
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    result: dict[str, object] = {"keys": args.keys, "blocks": args.blocks, "value_bytes": args.value_bytes}
    with tempfile.TemporaryDirectory(prefix="bench-snapshots-") as tmp:
        root = Path(tmp)
        blocks = make_blocks(args.keys, args.blocks, args.value_bytes, rnd)
        block_bytes = sum(len(k) + len(v or b"") for changes in blocks for k, v in changes.items())
        log("replaying the blocks into an empty store")
        store = CommitStore(str(root / "replayed"), keep_recent=2)
        replay_s = replay(store, blocks)
        height, app_hash = store.version, store.root_hash
        written = list({k for changes in blocks for k in changes})
        keys = rnd.sample(sorted(written), min(100_000, len(written)))  # the timed blocks rewrite these
        del blocks

        log("snapshot (unpaced) and restore into an empty store")
        snapshots = SnapshotStore(root / "snapshots")
        t0 = time.perf_counter()
        info = write_snapshot(snapshots, store.snapshot(), app_hash)
        snapshot_s = time.perf_counter() - t0
        snapshot_bytes = len(info.metadata) + sum(
            len(snapshots.load_chunk(height, FORMAT, i)) for i in range(info.chunks)
        )
        log("the node's job (paced) writing it, no blocks beside")
        manager = SnapshotManager(SnapshotStore(root / "paced"), interval=1, keep_recent=1)
        t0 = time.perf_counter()
        manager.after_commit(store)
        manager.wait()
        paced_s = time.perf_counter() - t0
        manager.close()
        assert manager.snapshots.get(height) == info
        restored = CommitStore(str(root / "restored"), keep_recent=2)
        restore_s = restore(restored, snapshots, height, app_hash)
        assert (restored.version, restored.root_hash) == (height, app_hash)
        restored.close()
        result.update(
            replay_s=round(replay_s, 2),
            replay_bytes=block_bytes,
            snapshot_write_s=round(snapshot_s, 2),
            snapshot_write_paced_s=round(paced_s, 2),
            restore_s=round(restore_s, 2),
            state_sync_s=round(snapshot_s + restore_s, 2),
            snapshot_bytes=snapshot_bytes,
            chunks=info.chunks,
            restore_vs_replay=round(restore_s / replay_s, 3),
            bytes_vs_replay=round(snapshot_bytes / block_bytes, 3),
        )
        log(json.dumps(result))

        log("blocks beside a snapshot being written (quiet / paced / unpaced, block by block)")
        result.update(blocks_beside(store, keys, root, args))
        log("the commit that starts a snapshot")
        result.update(starting_commit(store, keys, root, args))
        store.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
