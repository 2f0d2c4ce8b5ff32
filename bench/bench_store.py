"""Commit cost of CommitStore against a bare plyvel write batch of the same keys and values.

Builds a state of --state random keys, then for each batch size times apply+commit of a
block changing that many keys (half updates of existing keys, half inserts; 32-byte keys,
32-byte values), median over --repeats, next to the same keys/values written as one bare
plyvel write batch into a separate DB holding the same initial state (same DB options). One more,
untimed block per size counts the bytes each writes (keys + values put in its batch).

With --iavl, the Cosmos SDK's own tree (IAVL v1.2.6 on goleveldb, bench/iavl, built by make) then runs the
same workload in its own DB (Set calls + SaveVersion per block, median over --repeats), and the table sets
it beside the bare batch of this run.

    .venv/bin/python bench/bench_store.py --state 1000000 [--iavl]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import plyvel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.common import log  # noqa: E402
from sdk.store.commitstore import DB_OPTIONS, CommitStore  # noqa: E402


def build_state(store: CommitStore, bare: plyvel.DB, n: int, step: int, rnd: random.Random) -> list[bytes]:
    keys: list[bytes] = []
    t0 = time.perf_counter()
    while len(keys) < n:
        batch = {rnd.randbytes(32): rnd.randbytes(32) for _ in range(min(step, n - len(keys)))}
        store.apply(batch)
        store.commit()
        wb = bare.write_batch()
        for k, v in batch.items():
            wb.put(k, v)
        wb.write()
        keys.extend(batch)
        log(f"  state {len(keys):>9,} keys  v{store.version}  {time.perf_counter() - t0:7.1f}s")
    return keys


def block(keys: list[bytes], size: int, rnd: random.Random) -> tuple[dict[bytes, bytes], list[bytes]]:
    """A block's changes (half updates, half inserts) and its inserted keys."""
    changes = {k: rnd.randbytes(32) for k in rnd.sample(keys, size // 2)}
    inserted = [rnd.randbytes(32) for _ in range(size - size // 2)]
    for k in inserted:
        changes[k] = rnd.randbytes(32)
    return changes, inserted


class _CountingBatch:
    """A write batch that counts the bytes put into it (for the untimed byte count only)."""

    def __init__(self, batch: object) -> None:
        self.batch = batch
        self.bytes = 0

    def put(self, key: bytes, value: bytes) -> None:
        self.bytes += len(key) + len(value)
        self.batch.put(key, value)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.batch, name)


def bytes_written(store: CommitStore, changes: dict[bytes, bytes]) -> int:
    """Apply and commit ``changes`` through a counting batch: the bytes of the version's one write batch."""
    db = store._db
    batches: list[_CountingBatch] = []

    class CountingDB:
        def write_batch(self, **kw: object) -> _CountingBatch:
            batches.append(_CountingBatch(db.write_batch(**kw)))
            return batches[-1]

        def __getattr__(self, name: str) -> object:
            return getattr(db, name)

    store._db = CountingDB()  # type: ignore[assignment]
    try:
        store.apply(changes)
        store.commit()
    finally:
        store._db = db
    return sum(b.bytes for b in batches)


def run_iavl(args: argparse.Namespace) -> dict[int, dict[str, float]]:
    """Build bench/iavl (make) and run it on this run's workload: its JSON rows by block size."""
    binary = "bench/iavl/iavl-bench"
    subprocess.run(["make", "--no-print-directory", binary], cwd=ROOT, check=True)
    cmd = [os.path.join(ROOT, binary), f"-state={args.state}", f"-sizes={args.sizes}", f"-repeats={args.repeats}"]
    cmd += [f"-build-step={args.build_step}", f"-seed={args.seed}"] + ([f"-dir={args.dir}"] if args.dir else [])
    log(f"running IAVL: {' '.join(cmd)}")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return {row["batch"]: row for row in map(json.loads, out.splitlines())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state", type=int, default=1_000_000, help="initial number of keys")
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma-separated batch sizes")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--build-step", type=int, default=100_000, help="keys per version while building")
    ap.add_argument("--keep-recent", type=int, default=0)
    ap.add_argument("--cache-size", type=int, default=200_000)
    ap.add_argument("--dir", default=None, help="where to put the DBs (default: a temp dir)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iavl", action="store_true", help="also run IAVL (bench/iavl) on the same workload")
    args = ap.parse_args()
    rnd = random.Random(args.seed)

    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        store = CommitStore(os.path.join(d, "store"), keep_recent=args.keep_recent, cache_size=args.cache_size)
        bare = plyvel.DB(os.path.join(d, "bare"), **DB_OPTIONS)
        log(f"building state of {args.state:,} keys")
        t0 = time.perf_counter()
        keys = build_state(store, bare, args.state, args.build_step, rnd)
        build_s = time.perf_counter() - t0
        log("compacting both DBs (a bulk load leaves a compaction backlog)")
        store.compact()
        bare.compact_range()

        rows = []
        for size in (int(s) for s in args.sizes.split(",")):
            store_ms, apply_ms, bare_ms = [], [], []
            reads = store.node_reads
            for r in range(args.repeats):
                changes, inserted = block(keys, size, rnd)
                t = time.perf_counter()
                store.apply(changes)
                t_apply = time.perf_counter()
                store.commit()
                t_end = time.perf_counter()
                wb = bare.write_batch()
                for k, v in changes.items():
                    wb.put(k, v)
                wb.write()
                t_bare = time.perf_counter()
                store_ms.append((t_end - t) * 1e3)
                apply_ms.append((t_apply - t) * 1e3)
                bare_ms.append((t_bare - t_end) * 1e3)
                keys.extend(inserted)
                log(f"  {size:>7,} keys  run {r + 1}: store {store_ms[-1]:8.1f} ms  bare {bare_ms[-1]:7.1f} ms")
            s, b = statistics.median(store_ms), statistics.median(bare_ms)
            rows.append(
                {
                    "batch": size,
                    "store_ms": round(s, 2),
                    "apply_ms": round(statistics.median(apply_ms), 2),
                    "bare_ms": round(b, 2),
                    "ratio": round(s / b, 2),
                    "node_reads_per_block": (store.node_reads - reads) // args.repeats,
                }
            )
            changes, inserted = block(keys, size, rnd)
            rows[-1]["store_bytes"] = bytes_written(store, changes)
            rows[-1]["bare_bytes"] = sum(len(k) + len(v) for k, v in changes.items())
            keys.extend(inserted)
        store.close()
        bare.close()
    if args.iavl:
        iavl = run_iavl(args)
        for row in rows:
            it = iavl[row["batch"]]
            row["iavl_ms"], row["iavl_save_ms"] = it["total_ms"], it["save_ms"]
            row["iavl_ratio"] = round(it["total_ms"] / row["bare_ms"], 2)

    print(
        f"state: {args.state:,} keys (built in {build_s:.1f}s), repeats: {args.repeats}, "
        f"keep_recent: {args.keep_recent}, cache_size: {args.cache_size:,}"
    )
    print()
    iavl_head = " IAVL ms (median) | of which SaveVersion ms | IAVL ratio |" if args.iavl else ""
    print(
        "| batch (keys) | store ms (median) | of which apply ms | bare plyvel ms (median) | ratio "
        f"| store MB written | bare MB written | node reads/block |{iavl_head}"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if args.iavl else ""))
    for row in rows:
        iavl_cells = (
            f" {row['iavl_ms']:.1f} | {row['iavl_save_ms']:.1f} | {row['iavl_ratio']:.2f}x |" if args.iavl else ""
        )
        print(
            f"| {row['batch']:,} | {row['store_ms']:.1f} | {row['apply_ms']:.1f} | {row['bare_ms']:.1f} "
            f"| {row['ratio']:.2f}x | {row['store_bytes'] / 1e6:.2f} | {row['bare_bytes'] / 1e6:.2f} "
            f"| {row['node_reads_per_block']:,} |{iavl_cells}"
        )
    print()
    print(
        json.dumps(
            {
                "state": args.state,
                "build_s": round(build_s, 1),
                "repeats": args.repeats,
                "keep_recent": args.keep_recent,
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
