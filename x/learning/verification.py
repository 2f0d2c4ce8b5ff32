"""A checkpoint's verification (README.md, "Verification"): at its commit the beacon decides whether it is
replayed and by which other hosts (by power, sdk/draw.py as x/poc draws); the drawn verifiers' verdicts are taken
until its deadline; an end block settles it once all of them voted or the deadline came:

- **INVALID** when the verifiers that found it invalid hold more than half the drawn weight: the worker is
  slashed ``learning_slash_fraction`` of its collateral, paid to those verifiers pro rata to their drawn weight
  (x/slashing: rounded down, the rest to the community pool), and its share goes back to the creator;
- **VALID** otherwise: the worker may claim its share.

Either way a verifier whose verdict contradicts the outcome is slashed the same fraction, paid to the verifiers
on the winning side. A drawn verifier that sent nothing is not slashed.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

from protogen.gonka.learning.v1 import learning_pb2
from sdk import draw as draws
from sdk.context import Context
from sdk.crypto import bech32
from x.learning import keys, payments
from x.learning.errors import ErrReasonTooLong, ErrRunFinished, ErrSettled
from x.learning.keeper import LearningKeeper
from x.learning.params import PPM, slash_fraction
from x.learning.payments import INVALID, PENDING, VALID

REPLAY_TAG = b"gonka/learning/v1/replay"
VERIFIER_TAG = b"gonka/learning/v1/verifier"


def commit(keeper: LearningKeeper, ctx: Context, checkpoint: learning_pb2.Checkpoint) -> None:
    """MsgCommitCheckpoint: an ACTIVE run's commit rules, then the draw."""
    run = keeper.get_run(ctx, checkpoint.run_id)
    if run is not None and run.status == payments.FINISHED:
        raise ErrRunFinished.wrap(f"run {run.id} finished at height {run.finished_height}")
    keeper.check_checkpoint(ctx, checkpoint)
    checkpoint.height = ctx.header.height
    draw(keeper, ctx, checkpoint)


def draw(keeper: LearningKeeper, ctx: Context, checkpoint: learning_pb2.Checkpoint) -> None:
    """With the beacon the commit's block carries (that of the height before), keyed by run, round and worker:
    replayed with chance ``replay_rate_ppm``, then ``verifiers_per_checkpoint`` distinct hosts other than the
    worker drawn by power. Not replayed, or no other host: VALID at once."""
    params = keeper.get_params(ctx)
    height = ctx.header.height
    worker = bech32.decode(checkpoint.worker)
    seed = keeper.beacon.get_beacon(ctx, height - 1) + keys.draw_subject(checkpoint.run_id, checkpoint.round, worker)
    drawn: list[bytes] = []
    powers: dict[bytes, int] = {}
    if draws.is_selected(hashlib.sha256(REPLAY_TAG + seed).digest(), Fraction(params.replay_rate_ppm, PPM)):
        powers = {h: p for h, p in keeper.stake.validator_powers(ctx).items() if h != worker and p > 0}
        drawn = draws.draw_distinct(
            lambda i: hashlib.sha256(VERIFIER_TAG + seed + i.to_bytes(2, "big")).digest(),
            powers,
            params.verifiers_per_checkpoint,
        )
    checkpoint.verifiers.extend(learning_pb2.DrawnVerifier(address=bech32.encode(v), weight=powers[v]) for v in drawn)
    ctx.emit(
        "draw_verifiers",
        run_id=str(checkpoint.run_id),
        round=str(checkpoint.round),
        worker=checkpoint.worker,
        verifiers=",".join(bech32.encode(v) for v in drawn),
    )
    if drawn:
        checkpoint.outcome, checkpoint.deadline_height = PENDING, height + params.verdict_window
        keeper.set_checkpoint(ctx, checkpoint)
        keeper.set_pending(ctx, checkpoint, True)
    else:
        settle(keeper, ctx, checkpoint)


def submit_verdict(keeper: LearningKeeper, ctx: Context, verdict: learning_pb2.Verdict) -> None:
    """MsgSubmitVerdict: a reason within the limit, a checkpoint still PENDING, then ``add_verdict``'s rules."""
    limit = keeper.get_params(ctx).max_reason_len
    if len(verdict.reason.encode()) > limit:
        raise ErrReasonTooLong.wrap(f"{len(verdict.reason.encode())} bytes, at most {limit}")
    checkpoint = keeper.existing_checkpoint(ctx, verdict.run_id, verdict.round, verdict.worker)
    if checkpoint.outcome != PENDING:
        raise ErrSettled.wrap(
            f"run {verdict.run_id} round {verdict.round} worker {verdict.worker} is "
            f"{payments.outcome_name(checkpoint)} since height {checkpoint.settle_height}"
        )
    verdict.height = ctx.header.height
    keeper.add_verdict(ctx, verdict)


def end_block(keeper: LearningKeeper, ctx: Context) -> None:
    """Settle, in key order, every PENDING checkpoint all of whose verifiers voted or whose deadline is now."""
    for checkpoint in keeper.pending(ctx):
        voted = checkpoint.valid_verdicts + checkpoint.invalid_verdicts
        if voted == len(checkpoint.verifiers) or ctx.header.height >= checkpoint.deadline_height:
            settle(keeper, ctx, checkpoint)


def settle(keeper: LearningKeeper, ctx: Context, checkpoint: learning_pb2.Checkpoint) -> None:
    """Decide the checkpoint by drawn weight, slash the losers to the winners, refund an INVALID share, and
    finish the run if this was the last of its final round."""
    votes = {
        v.verifier: v.valid
        for v in keeper.records(
            ctx,
            keys.checkpoint_verdicts_prefix(checkpoint.run_id, checkpoint.round, bech32.decode(checkpoint.worker)),
            learning_pb2.Verdict,
        )
    }
    total = sum(d.weight for d in checkpoint.verifiers)
    against = sum(d.weight for d in checkpoint.verifiers if votes.get(d.address) is False)
    invalid = 2 * against > total
    voted = [d for d in checkpoint.verifiers if d.address in votes]
    winners = [(bech32.decode(d.address), d.weight) for d in voted if votes[d.address] != invalid]
    losers = [(bech32.decode(d.address), "learning_false_verdict") for d in voted if votes[d.address] == invalid]
    worker = [(bech32.decode(checkpoint.worker), "learning_invalid_checkpoint")] if invalid else []
    fraction = slash_fraction(keeper.get_params(ctx))
    slashed = []
    for offender, reason in worker + losers:
        taken = keeper.slashing.slash(ctx, offender, fraction, reason, winners, infraction_height=checkpoint.height)
        slashed.append(f"{bech32.encode(offender)}:{taken}")
    run = keeper.existing_run(ctx, checkpoint.run_id)
    refunded = payments.worker_share(run) if invalid else 0
    payments.refund(keeper, ctx, run, refunded)
    keeper.set_run(ctx, run)
    checkpoint.outcome, checkpoint.settle_height = (INVALID if invalid else VALID), ctx.header.height
    keeper.set_checkpoint(ctx, checkpoint)
    keeper.set_pending(ctx, checkpoint, False)
    ctx.emit(
        "settle_checkpoint",
        run_id=str(checkpoint.run_id),
        round=str(checkpoint.round),
        worker=checkpoint.worker,
        outcome=payments.outcome_name(checkpoint),
        slashed=",".join(slashed),
        refunded=f"{refunded}{run.denom}",
    )
    payments.maybe_finish(keeper, ctx, run)
