"""x/learning genesis: the whole module state, exported in key order and imported through the message rules.

Import replays the records as the chain accepted them (a run's size is not re-checked against the params,
which may have changed since it was created): runs first, then checkpoints round by round (so each
start hash chains from the previous round's global state), then verdicts, which recount the tallies; a
genesis whose stated tallies differ from its verdicts is refused, like bank's stated supply, and so is one whose
module account does not hold exactly every run's ``budget − paid − refunded``. The pending index is rebuilt from
the PENDING checkpoints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from protogen.gonka.learning.v1 import genesis_pb2, learning_pb2
from sdk.coins import parse_amount
from sdk.context import Context
from sdk.errors import ABCIError
from x.learning import invariants, keys, payments
from x.learning.keeper import LearningKeeper
from x.learning.params import default_params, validate_params
from x.learning.validate import validate_checkpoint, validate_run, validate_verdict


def default_genesis() -> genesis_pb2.GenesisState:
    return genesis_pb2.GenesisState(params=default_params(), next_run_id=1)


@contextmanager
def _entry(what: str) -> Iterator[None]:
    """A rule broken by a genesis record makes the genesis invalid, naming the record."""
    try:
        yield
    except ABCIError as err:
        raise ValueError(f"learning genesis {what}: {err.log}") from None


def init_genesis(ctx: Context, keeper: LearningKeeper, state: genesis_pb2.GenesisState) -> None:
    validate_params(state.params)
    keeper.set_params(ctx, state.params)
    if state.next_run_id < 1:
        raise ValueError("learning genesis next_run_id must be at least 1")
    keeper.set_next_run_id(ctx, state.next_run_id)
    for run in state.runs:
        with _entry(f"run {run.id}"):
            validate_run(run)
        if not 1 <= run.id < state.next_run_id or keeper.get_run(ctx, run.id) is not None:
            raise ValueError(f"learning genesis run id {run.id} is repeated or not below next_run_id")
        check_money(run)
        keeper.set_run(ctx, run)
    for checkpoint in sorted(state.checkpoints, key=lambda c: (c.run_id, c.round)):
        with _entry(f"checkpoint run {checkpoint.run_id} round {checkpoint.round} worker {checkpoint.worker!r}"):
            validate_checkpoint(checkpoint)
            keeper.check_checkpoint(ctx, checkpoint)
        record = learning_pb2.Checkpoint()
        record.CopyFrom(checkpoint)
        record.valid_verdicts = record.invalid_verdicts = 0
        if record.outcome not in (payments.PENDING, payments.VALID, payments.INVALID) or (
            record.paid and record.outcome != payments.VALID
        ):
            raise ValueError(f"learning genesis checkpoint run {record.run_id} round {record.round}: bad outcome")
        keeper.set_checkpoint(ctx, record)
        keeper.set_pending(ctx, record, record.outcome == payments.PENDING)
    for verdict in state.verdicts:
        with _entry(f"verdict by {verdict.verifier!r} on run {verdict.run_id} round {verdict.round}"):
            validate_verdict(verdict)
            keeper.add_verdict(ctx, verdict)
    counted = Counter((v.run_id, v.round, v.worker, v.valid) for v in state.verdicts)
    for checkpoint in state.checkpoints:
        of = (checkpoint.run_id, checkpoint.round, checkpoint.worker)
        if (counted[(*of, True)], counted[(*of, False)]) != (checkpoint.valid_verdicts, checkpoint.invalid_verdicts):
            raise ValueError(
                f"learning genesis checkpoint run {checkpoint.run_id} round {checkpoint.round} "
                f"worker {checkpoint.worker}: verdict tallies differ from the verdicts listed"
            )
    broken = invariants.escrow_held(keeper, ctx)
    if broken is not None:
        raise ValueError(f"learning genesis: {broken}")


def check_money(run: learning_pb2.TrainingRun) -> None:
    """Paid and refunded are amounts that together stay within the budget; the status is a run's."""
    with _entry(f"run {run.id}"):
        parse_amount(run.paid, "paid")
        parse_amount(run.refunded, "refunded")
    if payments.held(run) < 0 or run.status not in (payments.ACTIVE, payments.FINISHED):
        raise ValueError(f"learning genesis run {run.id}: paid and refunded exceed the budget, or a bad status")


def export_genesis(ctx: Context, keeper: LearningKeeper) -> genesis_pb2.GenesisState:
    return genesis_pb2.GenesisState(
        params=keeper.get_params(ctx),
        next_run_id=keeper.next_run_id(ctx),
        runs=keeper.records(ctx, keys.RUN_PREFIX, learning_pb2.TrainingRun),
        checkpoints=keeper.records(ctx, keys.CHECKPOINT_PREFIX, learning_pb2.Checkpoint),
        verdicts=keeper.records(ctx, keys.VERDICT_PREFIX, learning_pb2.Verdict),
    )
