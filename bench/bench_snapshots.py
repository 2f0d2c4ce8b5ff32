"""State-sync snapshots (sdk/snapshots): what taking and restoring one costs, and what a snapshot being
written beside the blocks costs them.

Builds a CommitStore of --state random keys (32-byte keys, --value-bytes values), then:
  - take: the snapshot of the latest version written to disk (chunks, MB, seconds);
  - restore: every chunk through ``Restore`` into an empty store, root checked and committed (seconds);
  - blocks: apply+commit of --blocks blocks rewriting --block-keys existing keys each (the state keeps its
    size), the median block: with no snapshot being written, with one written from the block before the
    first as the node does (paced: resting between chunks), and with the same writer unpaced; --repeats
    rounds, each arm first in turn, medians of the rounds.

    .venv/bin/python bench/bench_snapshots.py --state 300000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sdk.snapshots.format import FORMAT  # noqa: E402
from sdk.snapshots.manager import SnapshotManager, write_snapshot  # noqa: E402
from sdk.snapshots.restore import Applied, Restore  # noqa: E402
from sdk.snapshots.store import SnapshotStore  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402

ARMS = ["quiet", "paced", "unpaced"]
"""Blocks with no snapshot being written, with the node's paced writer, and with an unpaced one."""


class Workload:
    """The store and the blocks that rewrite its keys."""

    def __init__(self, store: CommitStore, keys: list[bytes], args: argparse.Namespace) -> None:
        self.store, self.keys, self.args = store, keys, args
        self.rng = random.Random(2)

    def blocks(self) -> list[float]:
        times = []
        for _ in range(self.args.blocks):
            changes = {
                key: self.rng.randbytes(self.args.value_bytes)
                for key in self.rng.sample(self.keys, self.args.block_keys)
            }
            start = time.perf_counter()
            self.store.apply(changes)
            self.store.commit()
            times.append(time.perf_counter() - start)
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=int, default=300_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--block-keys", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-snapshots-"))
    try:
        store = CommitStore(str(tmp / "db"))
        keys = [rng.randbytes(32) for _ in range(args.state)]
        for start in range(0, args.state, 50_000):
            store.apply({key: rng.randbytes(args.value_bytes) for key in keys[start : start + 50_000]})
            store.commit()
        store.compact()
        snapshots = SnapshotStore(tmp / "snapshots")
        t = time.perf_counter()
        info = write_snapshot(snapshots, store.snapshot(), store.root_hash)
        take_s = time.perf_counter() - t
        size = sum(len(snapshots.load_chunk(info.height, FORMAT, i)) for i in range(info.chunks))

        fresh = CommitStore(str(tmp / "fresh"))
        t = time.perf_counter()
        _, restore = Restore.offer(fresh, info.height, FORMAT, info.chunks, info.hash, info.metadata, store.root_hash)
        assert restore is not None
        results = [restore.apply_chunk(i, snapshots.load_chunk(info.height, FORMAT, i)) for i in range(info.chunks)]
        restore_s = time.perf_counter() - t
        assert results[-1] is Applied.ACCEPT and fresh.root_hash == store.root_hash
        fresh.close()

        work = Workload(store, keys, args)
        medians: dict[str, list[float]] = {arm: [] for arm in ARMS}
        outlasted = []  # whether the paced snapshot was still being written after the timed blocks
        for repeat in range(args.repeats):
            for arm in ARMS[repeat % 3 :] + ARMS[: repeat % 3]:  # each arm first in turn
                shutil.rmtree(tmp / "snapshots", ignore_errors=True)
                if arm == "quiet":
                    medians[arm].append(statistics.median(work.blocks()))
                elif arm == "paced":  # as the node takes it
                    manager = SnapshotManager(snapshots, 1, 1)
                    manager.after_commit(store)
                    medians[arm].append(statistics.median(work.blocks()))
                    outlasted.append(manager.busy)
                    manager.wait()
                else:  # the same writer without rests between chunks
                    writer = threading.Thread(
                        target=write_snapshot, args=(snapshots, store.snapshot(), store.root_hash)
                    )
                    writer.start()
                    medians[arm].append(statistics.median(work.blocks()))
                    writer.join()
        store.close()
        print(
            json.dumps(
                {
                    "state_keys": args.state,
                    "chunks": info.chunks,
                    "snapshot_mb": round(size / 1e6, 1),
                    "take_s": round(take_s, 2),
                    "restore_s": round(restore_s, 2),
                    "block_keys": args.block_keys,
                    **{f"block_ms_{arm}": [round(x * 1000, 1) for x in medians[arm]] for arm in ARMS},
                    "ratio_paced": round(statistics.median(medians["paced"]) / statistics.median(medians["quiet"]), 2),
                    "ratio_unpaced": round(
                        statistics.median(medians["unpaced"]) / statistics.median(medians["quiet"]), 2
                    ),
                    "snapshot_outlasted_blocks": outlasted,
                }
            )
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
