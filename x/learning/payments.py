"""A run's money (README.md, "Budget and pay"): the creator's budget escrowed in the module account ``learning``
at creation, a worker's share paid through x/vesting for each VALID checkpoint it claims (and reported to x/rewards
as work), INVALID shares refunded at settlement, and the rest refunded when the run finishes. At every moment the
account holds, per run, ``budget − paid − refunded`` (the ``learning/escrow-held`` invariant).
"""

from __future__ import annotations

from protogen.gonka.learning.v1 import learning_pb2
from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from x.learning import keys
from x.learning.errors import ErrAlreadyPaid, ErrNotValid, ErrNotWorker
from x.learning.keeper import LearningKeeper

ACTIVE, FINISHED = learning_pb2.RUN_STATUS_ACTIVE, learning_pb2.RUN_STATUS_FINISHED
PENDING, VALID, INVALID = learning_pb2.OUTCOME_PENDING, learning_pb2.OUTCOME_VALID, learning_pb2.OUTCOME_INVALID


def coins(denom: str, amount: int) -> Coins:
    return make_coins([(denom, amount)])


def worker_share(run: learning_pb2.TrainingRun) -> int:
    """What one worker earns for one round: ``budget // (rounds × workers)``; the remainder is refunded."""
    return int(run.budget) // (run.rounds * len(run.workers))


def held(run: learning_pb2.TrainingRun) -> int:
    """What the module account holds for the run."""
    return int(run.budget) - int(run.paid) - int(run.refunded)


def open_run(keeper: LearningKeeper, ctx: Context, run: learning_pb2.TrainingRun) -> int:
    """MsgCreateTrainingRun's state rules, then the budget moved from the creator into escrow; the new id."""
    keeper.check_new_run(ctx, run)
    run.denom = keeper.get_params(ctx).denom
    module = keeper.accounts.ensure_module_account(ctx, keys.LEARNING_ACCOUNT)
    keeper.bank.send_coins(ctx, bech32.decode(run.creator), module, coins(run.denom, int(run.budget)))
    return keeper.create_run(ctx, run)


def refund(keeper: LearningKeeper, ctx: Context, run: learning_pb2.TrainingRun, amount: int) -> None:
    """``amount`` of the escrow back to the creator (the caller stores the run)."""
    if amount:
        keeper.bank.send_coins(ctx, keeper.address, bech32.decode(run.creator), coins(run.denom, amount))
        run.refunded = str(int(run.refunded) + amount)


def claim(keeper: LearningKeeper, ctx: Context, worker: str, run_id: int, round_: int) -> int:
    """MsgClaimTrainingReward: the worker's share for its VALID checkpoint, once, vested like inference pay and
    reported to x/rewards as work of ``share`` units (one per ngonka earned); the amount paid."""
    run = keeper.existing_run(ctx, run_id)
    if worker not in run.workers:
        raise ErrNotWorker.wrap(f"{worker} in run {run.id}")
    checkpoint = keeper.existing_checkpoint(ctx, run_id, round_, worker)
    if checkpoint.outcome != VALID:
        raise ErrNotValid.wrap(f"run {run_id} round {round_} worker {worker} is {outcome_name(checkpoint)}")
    if checkpoint.paid:
        raise ErrAlreadyPaid.wrap(f"run {run_id} round {round_} worker {worker}")
    share = worker_share(run)
    address = bech32.decode(worker)
    keeper.vesting.vest(
        ctx, keys.LEARNING_ACCOUNT, address, coins(run.denom, share), keeper.get_params(ctx).payment_vesting_epochs
    )
    keeper.rewards.report_work(ctx, keeper.epochs.current_epoch(ctx).number, address, share)
    run.paid = str(int(run.paid) + share)
    checkpoint.paid = True
    keeper.set_run(ctx, run)
    keeper.set_checkpoint(ctx, checkpoint)
    return share


def outcome_name(checkpoint: learning_pb2.Checkpoint) -> str:
    return learning_pb2.Outcome.Name(checkpoint.outcome).removeprefix("OUTCOME_")


def maybe_finish(keeper: LearningKeeper, ctx: Context, run: learning_pb2.TrainingRun) -> None:
    """Once every worker of the final round has a settled checkpoint the run is FINISHED: the escrow not owed to
    a VALID unclaimed or a still PENDING checkpoint (which may yet be VALID) goes back to the creator."""
    if run.status != ACTIVE:
        return
    final = keeper.round_checkpoints(ctx, run.id, run.rounds - 1)
    if len(final) < len(run.workers) or any(c.outcome == PENDING for c in final):
        return
    checkpoints = keeper.records(ctx, keys.run_checkpoints_prefix(run.id), learning_pb2.Checkpoint)
    owed = worker_share(run) * sum(
        1 for c in checkpoints if c.outcome == PENDING or (c.outcome == VALID and not c.paid)
    )
    amount = held(run) - owed
    refund(keeper, ctx, run, amount)
    run.status, run.finished_height = FINISHED, ctx.header.height
    keeper.set_run(ctx, run)
    ctx.emit("finish_run", run_id=str(run.id), refunded=f"{amount}{run.denom}")
