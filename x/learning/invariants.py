"""What must hold of x/learning's state after every block (registered as ``learning/…``)."""

from __future__ import annotations

from protogen.gonka.learning.v1 import learning_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.learning import keys, payments
from x.learning.keeper import LearningKeeper


def escrow_held(keeper: LearningKeeper, ctx: Context) -> str | None:
    """``learning/escrow-held``: the module account holds exactly every run's ``budget − paid − refunded``."""
    expected: dict[str, int] = {}
    for run in keeper.records(ctx, keys.RUN_PREFIX, learning_pb2.TrainingRun):
        expected[run.denom] = expected.get(run.denom, 0) + payments.held(run)
    held = dict(keeper.bank.get_all_balances(ctx, keeper.address))
    for denom in sorted(expected.keys() | held.keys()):
        if held.get(denom, 0) != expected.get(denom, 0):
            return (
                f"learning account holds {held.get(denom, 0)}{denom} but the runs' budgets less paid and refunded "
                f"are {expected.get(denom, 0)}{denom}"
            )
    return None


def pending_indexed(keeper: LearningKeeper, ctx: Context) -> str | None:
    """``learning/pending-indexed``: the pending index is exactly the PENDING checkpoints."""
    indexed = {keys.decode_pending(key) for key, _ in ctx.kv(keys.STORE_PREFIX).iterate(keys.PENDING_PREFIX)}
    for checkpoint in keeper.records(ctx, keys.CHECKPOINT_PREFIX, learning_pb2.Checkpoint):
        of = (checkpoint.run_id, checkpoint.round, bech32.decode(checkpoint.worker))
        if (checkpoint.outcome == payments.PENDING) != (of in indexed):
            return f"checkpoint run {of[0]} round {of[1]} worker {checkpoint.worker} is out of step with the index"
        indexed.discard(of)
    for run_id, round_, _ in sorted(indexed):
        return f"the pending index names a missing checkpoint of run {run_id} round {round_}"
    return None
