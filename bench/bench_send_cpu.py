"""The app's CPU time per bank send, in process: CheckTx for every send, then blocks of ``--block`` sends through
PrepareProposal, ProcessProposal, FinalizeBlock and Commit, as a validator runs them (so a block's own work, the
modules' begin and end blocks, counts per send too), each block's sends rechecked once after the block before
it (a flood's mempool rechecks about once per send: CometBFT rechecks what is left after every block; the
recheck figure is per send rechecked, and the total counts one per send). Every
run starts with the signature cache empty, as a node meets new txs, and the app marks the localnet's
``index_events`` as a node does; with ``--telemetry`` every call is also timed and reported to the node's
metrics (sdk/telemetry) as the ABCI server of a node with ``[telemetry] enabled`` reports it. CPU time of this
process (``time.process_time``), not wall time: on a machine shared with other work, time slices taken by others
do not count, so two checkouts can be compared run by run while the machine is busy. The median of ``--runs``.

Run from the root of the checkout to measure (its app, its modules):

    PYTHONPATH=$PWD .venv/bin/python bench/bench_send_cpu.py [--sends 3000] [--block 300] [--runs 5] [--telemetry]
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
from prometheus_client import CollectorRegistry  # noqa: E402

from gonkad import localnet  # noqa: E402
from sdk.crypto import secp256k1  # noqa: E402
from sdk.telemetry.node_metrics import NodeMetrics  # noqa: E402
from sdk.telemetry.observed import observe_calls  # noqa: E402

SENDERS = 4


def one_run(sends: int, block: int, telemetry: bool) -> tuple[float, float, float]:
    """(CheckTx µs, recheck µs, block µs) of CPU per send."""
    with tempfile.TemporaryDirectory() as tmp:
        keys = sender_keys(SENDERS)
        app = in_process_app(tmp, keys, index_events=frozenset(localnet.load_settings().index_events))
        if telemetry:
            observe_calls(app, NodeMetrics(CollectorRegistry()).observe_abci)
        signed = presign(keys, "bench", list(range(SENDERS)), sends // SENDERS)
        txs = [tx for batch in zip(*signed) for tx in batch]
        secp256k1.verify.cache_clear()
        start = time.process_time()
        for raw in txs:
            assert app.check_tx(abci.RequestCheckTx(tx=raw)).code == 0
        check = time.process_time() - start
        recheck = blocks = 0.0
        parts = [txs[first : first + block] for first in range(0, len(txs), block)]
        for index, part in enumerate(parts):
            height = index + 2
            start = time.process_time()
            app.prepare_proposal(abci.RequestPrepareProposal(max_tx_bytes=1 << 24, height=height, txs=part))
            app.process_proposal(abci.RequestProcessProposal(height=height, txs=part))
            result = app.finalize_block(abci.RequestFinalizeBlock(height=height, txs=part))
            assert all(r.code == 0 for r in result.tx_results)
            app.commit(abci.RequestCommit())
            blocks += time.process_time() - start
            start = time.process_time()
            for raw in parts[index + 1] if index + 1 < len(parts) else []:
                assert app.check_tx(abci.RequestCheckTx(tx=raw, type=abci.RECHECK)).code == 0
            recheck += time.process_time() - start
        app.store.close()
    rechecked = len(txs) - len(parts[0])
    return check / len(txs) * 1e6, recheck / rechecked * 1e6, blocks / len(txs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sends", type=int, default=3000)
    parser.add_argument("--block", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--telemetry", action="store_true", help="report every call to the node's metrics")
    args = parser.parse_args()
    runs = [one_run(args.sends, args.block, args.telemetry) for _ in range(args.runs)]
    check, recheck, blocks = (statistics.median(r[i] for r in runs) for i in range(3))
    total = statistics.median(sum(r) for r in runs)
    print(f"check_us={check:.1f} recheck_us={recheck:.1f} block_us={blocks:.1f} total_us={total:.1f}")


if __name__ == "__main__":
    main()
