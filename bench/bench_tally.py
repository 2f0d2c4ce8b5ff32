"""Governance tally cost: ``GovKeeper.tally`` (read every vote, weigh it by the validator set's power) and
the whole end of a voting period (tally, delete the votes, refund the deposit, run one message), with N
validators who all voted (half plain yes, half split yes/no/abstain/veto). Median of several runs.

    .venv/bin/python bench/bench_tally.py [--voters 100 1000] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cosmpy.protos.cosmos.gov.v1 import gov_pb2  # noqa: E402
from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402
from google.protobuf.any_pb2 import Any as AnyPb  # noqa: E402

from app import GonkaApp  # noqa: E402
from gonkad import genesis  # noqa: E402
from protogen.gonka.epochs.v1 import epochs_pb2  # noqa: E402
from protogen.gonka.epochs.v1 import tx_pb2 as epochs_tx
from sdk.coins import make_coins  # noqa: E402
from sdk.context import BlockHeader, Context  # noqa: E402
from sdk.crypto import bech32  # noqa: E402
from sdk.params import GOV_AUTHORITY  # noqa: E402
from sdk.store.cachekv import CacheKV  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402
from x.gov import keys  # noqa: E402

W = gov_pb2.WeightedVoteOption
SPLIT = [
    W(option=gov_pb2.VOTE_OPTION_YES, weight="0.4"),
    W(option=gov_pb2.VOTE_OPTION_NO, weight="0.3"),
    W(option=gov_pb2.VOTE_OPTION_ABSTAIN, weight="0.2"),
    W(option=gov_pb2.VOTE_OPTION_NO_WITH_VETO, weight="0.1"),
]
YES = [W(option=gov_pb2.VOTE_OPTION_YES, weight="1.000000000000000000")]


def setup(path: str, voters: int) -> tuple[GonkaApp, CacheKV, int]:
    """A chain at genesis, then (in one branch) ``voters`` validators and one proposal in its voting period
    with a vote from each; the proposer funded for the deposit."""
    app = GonkaApp(CommitStore(path))
    proposer = bytes(20)
    state = genesis.add_genesis_account(genesis.default_app_state(), bech32.encode(proposer), [("ngonka", 10**15)])
    app.init_chain(
        abci.RequestInitChain(chain_id="bench", initial_height=1, app_state_bytes=json.dumps(state).encode())
    )
    store = CacheKV(app.pending_genesis)
    ctx = Context(store, BlockHeader("bench", 1, 10**18))
    operators = [i.to_bytes(4, "big") + bytes(16) for i in range(1, voters + 1)]
    app.stake_keeper.set_validator_powers(ctx, {op: 1000 + i for i, op in enumerate(operators)})
    msg = AnyPb()
    msg.Pack(
        epochs_tx.MsgUpdateParams(
            authority=bech32.encode(GOV_AUTHORITY),
            params=epochs_pb2.Params(
                epoch_length=50, race_validation_offset=5, set_validators_offset=10, inference_offset=11
            ),
        ),
        type_url_prefix="/",
    )
    k = app.gov_keeper
    pid = k.submit_proposal(ctx, [msg], make_coins([("ngonka", 100 * 10**9)]), proposer, "", "t", "s")
    kv = ctx.kv(keys.STORE_PREFIX)
    for i, op in enumerate(operators):
        vote = gov_pb2.Vote(proposal_id=pid, voter=bech32.encode(op), options=SPLIT if i % 2 else YES)
        kv.set(keys.vote_key(pid, op), vote.SerializeToString())
    return app, store, pid


def measure(voters: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        app, store, pid = setup(str(Path(tmp) / "db"), voters)
        tally_ms, finish_ms = [], []
        for _ in range(runs):
            ctx = Context(store.branch(), BlockHeader("bench", 2, 10**18))
            start = time.perf_counter()
            outcome = app.gov_keeper.tally(ctx, pid)
            tally_ms.append((time.perf_counter() - start) * 1000)
            assert outcome.passes, outcome
            ctx = Context(store.branch(), BlockHeader("bench", 2, 10**18))
            start = time.perf_counter()
            app.gov_keeper._finish(ctx, pid)
            finish_ms.append((time.perf_counter() - start) * 1000)
            assert app.gov_keeper.get_proposal(ctx, pid).status == gov_pb2.PROPOSAL_STATUS_PASSED
        app.store.close()
    return {"voters": voters, "tally_ms": statistics.median(tally_ms), "end_of_voting_ms": statistics.median(finish_ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voters", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    for voters in args.voters:
        print(json.dumps(measure(voters, args.runs)), flush=True)


if __name__ == "__main__":
    main()
