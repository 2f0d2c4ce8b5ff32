"""Cost of an epoch's set-validators stage with many hosts: FinalizeBlock (and Commit) of the block where the
epoch's weights become the validator set, against an ordinary block of the same chain.

The chain starts from a genesis whose x/stake state already holds N hosts (collateral 1,000 + i GNK each, in
the bonded pool's bank balance), so building it costs one InitChain, not N gentxs. Epochs are 10 blocks
(race 0, race validation 1, set validators 2, inference 3): each epoch gives one set-validators block (offset
2) and one ordinary block (offset 5) to time; the median over ``--runs`` epochs is reported. Invariants are
off, as on a production node. With ``--race`` (the default) every host commits at each race stage and is judged
valid by the whole set at each race-validation stage (written as the hosts' messages would leave it, not timed),
so each set-validators block is x/sprint deciding every host's weight and x/stake rebuilding a different set and
sending its diff; ``--no-race`` has no host race, so collateral stands in and the set is recomputed unchanged.

    .venv/bin/python bench/bench_epoch.py [--hosts 100,1000] [--runs 5] [--no-race]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402
from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402

from app import GonkaApp  # noqa: E402
from gonkad import genesis  # noqa: E402
from protogen.gonka.epochs.v1 import epochs_pb2  # noqa: E402
from protogen.gonka.sprint.v1 import sprint_pb2  # noqa: E402
from sdk.address import module_address  # noqa: E402
from sdk.context import Context  # noqa: E402
from sdk.crypto import bech32  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402
from x.sprint.keeper import SprintKeeper  # noqa: E402
from x.stake.keeper import StakeKeeper  # noqa: E402
from x.stake.keys import BONDED_POOL  # noqa: E402

GNK = 10**9
EPOCH = {"epoch_length": "10", "race_validation_offset": "1", "set_validators_offset": "2", "inference_offset": "3"}
SET_VALIDATORS_OFFSET, ORDINARY_OFFSET = 2, 5


def app_state(hosts: int) -> dict[str, Any]:
    """The default app state with ``hosts`` hosts in x/stake's genesis and their collateral in the pool."""
    state = genesis.default_app_state()
    state["epochs"] = {"params": dict(EPOCH)}
    entries, total = [], 0
    for i in range(hosts):
        seed = i.to_bytes(4, "big")
        operator = hashlib.sha256(b"operator" + seed).digest()[:20]
        amount = (1_000 + i) * GNK
        total += amount
        entries.append(
            {
                "operator": bech32.encode(operator),
                "consensus_pubkey": _b64(hashlib.sha256(b"cons" + seed).digest()),
                "description": {"moniker": f"host{i}"},
                "collateral": str(amount),
            }
        )
    state["stake"] = {"hosts": entries}
    state["bank"]["balances"].append(
        {"address": bech32.encode(module_address(BONDED_POOL)), "coins": [{"denom": "ngonka", "amount": str(total)}]}
    )
    return state


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class RaceTraffic:
    """Epoch hooks that write what the hosts' race messages would: at the race stage a commitment of every host
    (500–999 proofs, different each epoch, all backed by collateral: 1,000 + i GNK), at the race-validation stage
    every commitment judged valid by the whole validator set (the tallies ``MsgSprintValidation`` leaves). x/sprint
    then decides every host's weight at set validators, and x/stake makes them the set, as on a live chain."""

    def __init__(self, sprint: SprintKeeper, stake: StakeKeeper) -> None:
        self.sprint = sprint
        self.stake = stake

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        return None

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        if stage == epochs_pb2.STAGE_RACE:
            for host in self.stake.hosts(ctx):
                op = bech32.decode(host.operator)
                count = 500 + int.from_bytes(hashlib.sha256(op + epoch.to_bytes(8, "big")).digest()[:4], "big") % 500
                root = hashlib.sha256(op + epoch.to_bytes(8, "big")).digest()
                self.sprint.set_commitment(
                    ctx, sprint_pb2.Commitment(host=host.operator, epoch=epoch, root=root, count=count, height=1)
                )
        elif stage == epochs_pb2.STAGE_RACE_VALIDATION:
            powers = self.stake.validator_powers(ctx)
            total = sum(powers.values())
            for commitment in self.sprint.commitments(ctx, epoch):
                commitment.valid_power = total - powers.get(bech32.decode(commitment.host), 0)
                self.sprint.set_commitment(ctx, commitment)


def measure(hosts: int, runs: int, race: bool) -> dict[str, Any]:
    """Median FinalizeBlock and Commit milliseconds of set-validators blocks and ordinary blocks."""
    with tempfile.TemporaryDirectory() as tmp:
        app = GonkaApp(CommitStore(str(Path(tmp) / "db")))
        if race:  # the hosts' messages land before x/sprint's and x/stake's hooks act on them
            app.epochs_keeper.hooks = (RaceTraffic(app.sprint_keeper, app.stake_keeper), *app.epochs_keeper.hooks)
        start = time.perf_counter()
        reply = app.init_chain(
            abci.RequestInitChain(
                chain_id="bench", initial_height=1, app_state_bytes=json.dumps(app_state(hosts)).encode()
            )
        )
        init_ms = (time.perf_counter() - start) * 1000
        validators = len(reply.validators)
        timings: dict[str, list[float]] = {"sv_finalize": [], "sv_commit": [], "plain_finalize": [], "plain_commit": []}
        updates: list[int] = []
        last_height = 10 * (runs + 1)
        for height in range(1, last_height + 1):
            offset = (height - 1) % 10
            request = abci.RequestFinalizeBlock(height=height, time=Timestamp(seconds=5 * height))
            t0 = time.perf_counter()
            response = app.finalize_block(request)
            t1 = time.perf_counter()
            app.commit(abci.RequestCommit())
            t2 = time.perf_counter()
            if height <= 10:  # epoch 0 has no stages: warm-up
                continue
            kind = "sv" if offset == SET_VALIDATORS_OFFSET else "plain" if offset == ORDINARY_OFFSET else None
            if kind is not None:
                timings[f"{kind}_finalize"].append((t1 - t0) * 1000)
                timings[f"{kind}_commit"].append((t2 - t1) * 1000)
            if kind == "sv":
                updates.append(len(response.validator_updates))
                assert any(e.type == "set_validators" for e in response.events), height
                assert any(e.type == ("sprint_weights" if race else "sprint_no_race") for e in response.events), height
        app.store.close()
    return {
        "hosts": hosts,
        "validators": validators,
        "runs": runs,
        "race": race,
        "init_chain_ms": round(init_ms, 1),
        "sv_updates": updates,
        **{k: round(statistics.median(v), 2) for k, v in timings.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="100,1000", help="comma-separated host counts")
    parser.add_argument("--runs", type=int, default=5, help="epochs (set-validators blocks) per host count")
    parser.add_argument("--no-race", dest="race", action="store_false", help="keep collateral's weights")
    args = parser.parse_args()
    results = [measure(int(n), args.runs, args.race) for n in args.hosts.split(",")]
    print(
        f"{'hosts':>6} {'validators':>10} {'updates':>8} {'SV finalize ms':>15} {'SV commit ms':>13} "
        f"{'plain finalize ms':>18} {'plain commit ms':>16} {'InitChain ms':>13}"
    )
    for r in results:
        print(
            f"{r['hosts']:>6} {r['validators']:>10} {statistics.median(r['sv_updates']):>8} "
            f"{r['sv_finalize']:>15.2f} {r['sv_commit']:>13.2f} "
            f"{r['plain_finalize']:>18.2f} {r['plain_commit']:>16.2f} {r['init_chain_ms']:>13.1f}"
        )
    print(json.dumps({"bench": "epoch_set_validators", "results": results}, indent=2))


if __name__ == "__main__":
    main()
