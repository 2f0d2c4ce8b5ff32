"""Cost of an epoch's reward distribution with many hosts: FinalizeBlock (and Commit) of an epoch's first
block, where x/rewards pays the previous epoch (mint, fees, pool share, one payout per host), against an
ordinary block of the same chain.

The chain starts from a genesis whose x/stake state already holds N hosts (bench/bench_epoch.py's
``app_state``), with the real network's reward params. Epochs are 10 blocks; each epoch's first block
(offset 0) and an ordinary block (offset 5) are timed, the median over ``--runs`` epochs reported.
``--work`` (the default) reports work for every host at offset 4 of each epoch (``report_work``, as the
inference module will), so the split is by work; ``--no-work`` leaves x/stake's epoch weights to stand in.
Invariants are off, as on a production node. Hosts' shares are vested (x/vesting), as on the chain.

    .venv/bin/python bench/bench_rewards.py [--hosts 100,1000] [--runs 5] [--no-work]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_epoch import app_state  # noqa: E402
from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402
from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402

from app import GonkaApp  # noqa: E402
from sdk.context import Context  # noqa: E402
from sdk.crypto import bech32  # noqa: E402
from sdk.module import run_hook  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402

WORK_OFFSET, ORDINARY_OFFSET = 4, 5


def measure(hosts: int, runs: int, work: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        app = GonkaApp(CommitStore(str(Path(tmp) / "db")))
        app.init_chain(
            abci.RequestInitChain(
                chain_id="bench", initial_height=1, app_state_bytes=json.dumps(app_state(hosts)).encode()
            )
        )
        operators: list[bytes] = []
        genutil = app.module_named("genutil")
        original = genutil.begin_block

        def report(ctx: Context, block: Any) -> None:  # runs last in begin block, as a module's would
            original(ctx, block)
            epoch = app.epochs_keeper.current_epoch(ctx)
            if work and (block.height - epoch.start_height) == WORK_OFFSET:
                if not operators:
                    operators.extend(bech32.decode(h.operator) for h in app.stake_keeper.hosts(ctx))
                run_hook(
                    ctx,
                    "bench work",
                    lambda c: [
                        app.rewards_keeper.report_work(
                            c, epoch.number, op, 1 + int.from_bytes(hashlib.sha256(op).digest()[:2], "big")
                        )
                        for op in operators
                    ],
                )

        genutil.begin_block = report  # type: ignore[method-assign]
        timings: dict[str, list[float]] = {
            "pay_finalize": [],
            "pay_commit": [],
            "plain_finalize": [],
            "plain_commit": [],
        }
        paid: list[int] = []
        for height in range(1, 10 * (runs + 1) + 2):
            offset = (height - 1) % 10
            t0 = time.perf_counter()
            response = app.finalize_block(abci.RequestFinalizeBlock(height=height, time=Timestamp(seconds=5 * height)))
            t1 = time.perf_counter()
            app.commit(abci.RequestCommit())
            t2 = time.perf_counter()
            if height <= 11:  # epoch 0 pays nothing: warm-up
                continue
            kind = "pay" if offset == 0 else "plain" if offset == ORDINARY_OFFSET else None
            if kind is not None:
                timings[f"{kind}_finalize"].append((t1 - t0) * 1000)
                timings[f"{kind}_commit"].append((t2 - t1) * 1000)
            if kind == "pay":
                [event] = [e for e in response.events if e.type == "rewards"]
                paid.append(int({a.key: a.value for a in event.attributes}["hosts"]))
        app.store.close()
    return {
        "hosts": hosts,
        "runs": runs,
        "work": work,
        "hosts_paid": paid,
        **{k: round(statistics.median(v), 2) for k, v in timings.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="100,1000", help="comma-separated host counts")
    parser.add_argument("--runs", type=int, default=5, help="epochs (paying blocks) per host count")
    parser.add_argument("--no-work", dest="work", action="store_false", help="split by x/stake's weights")
    args = parser.parse_args()
    results = [measure(int(n), args.runs, args.work) for n in args.hosts.split(",")]
    print(
        f"{'hosts':>6} {'paid':>6} {'pay finalize ms':>16} {'pay commit ms':>14} {'plain finalize ms':>18} "
        f"{'plain commit ms':>16}"
    )
    for r in results:
        print(
            f"{r['hosts']:>6} {statistics.median(r['hosts_paid']):>6} {r['pay_finalize']:>16.2f} "
            f"{r['pay_commit']:>14.2f} {r['plain_finalize']:>18.2f} {r['plain_commit']:>16.2f}"
        )
    print(json.dumps({"bench": "epoch_rewards", "results": results}, indent=2))


if __name__ == "__main__":
    main()
