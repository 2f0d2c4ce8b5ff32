"""The app's CPU time per bank send, in process: CheckTx for every send, then blocks of ``--block`` sends through
PrepareProposal, ProcessProposal, FinalizeBlock and Commit, as a validator runs them (so a block's own work, the
modules' begin and end blocks, counts per send too). CPU time of this process (``time.process_time``), not wall
time: on a machine shared with other work, time slices taken by others do not count, so two checkouts can be
compared run by run while the machine is busy. The median of ``--runs``.

Run from the root of the checkout to measure (its app, its modules):

    PYTHONPATH=$PWD .venv/bin/python bench/bench_send_cpu.py [--sends 3000] [--block 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tx import in_process_app, presign, sender_keys  # noqa: E402
from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402

SENDERS = 4


def one_run(sends: int, block: int) -> tuple[float, float]:
    """(CheckTx µs, block µs) of CPU per send."""
    with tempfile.TemporaryDirectory() as tmp:
        keys = sender_keys(SENDERS)
        app = in_process_app(tmp, keys)
        signed = presign(keys, "bench", list(range(SENDERS)), sends // SENDERS)
        txs = [tx for batch in zip(*signed) for tx in batch]
        start = time.process_time()
        for raw in txs:
            assert app.check_tx(abci.RequestCheckTx(tx=raw)).code == 0
        check = time.process_time() - start
        start = time.process_time()
        for height, first in enumerate(range(0, len(txs), block), start=2):
            part = txs[first : first + block]
            app.prepare_proposal(abci.RequestPrepareProposal(max_tx_bytes=1 << 24, height=height, txs=part))
            app.process_proposal(abci.RequestProcessProposal(height=height, txs=part))
            result = app.finalize_block(abci.RequestFinalizeBlock(height=height, txs=part))
            assert all(r.code == 0 for r in result.tx_results)
            app.commit(abci.RequestCommit())
        blocks = time.process_time() - start
        app.store.close()
    return check / len(txs) * 1e6, blocks / len(txs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sends", type=int, default=3000)
    parser.add_argument("--block", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = [one_run(args.sends, args.block) for _ in range(args.runs)]
    check = statistics.median(r[0] for r in runs)
    blocks = statistics.median(r[1] for r in runs)
    print(f"check_us={check:.1f} block_us={blocks:.1f} total_us={check + blocks:.1f}")


if __name__ == "__main__":
    main()
