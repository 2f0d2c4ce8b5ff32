"""A dispute, opened by a drawn validator's mismatch (README.md, "Disputes"): its voters drawn by weight with the
beacon of a height after the verdict, their votes, and the decision the moment one side holds more than half the
voters' power (or, at the close of voting, on the votes sent):

- **INVALIDATED** (the mismatch side won): the requester is refunded the payment, taken back from the executor
  (x/inference ``invalidate``: its vesting schedule first), the executor is slashed ``dispute_slash_fraction`` of
  its collateral, paid to the accuser and the voters that found the mismatch pro rata to their power, and its
  standing records an invalidation (``standing.invalidated``);
- **CLEARED** (the match side won): the accuser is slashed the same, paid to the executor and the voters that
  found the match; the answer counts as validated for its executor;
- **UNDECIDED** (no voter could be drawn, or the votes sent settle nothing): the answer stands, no one is
  slashed.

Voters that did not vote by the close count as missed.
"""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.poc import standing, types
from x.poc.errors import ErrAlreadyValidated, ErrNotAssigned, ErrNotDrawn, ErrWindowClosed
from x.poc.keeper import PocKeeper
from x.poc.params import slash_fraction
from x.poc.types import DECIDED, awaited


def draw_voters(keeper: PocKeeper, ctx: Context, record: poc_pb2.Validation) -> None:
    """Draw ``dispute_voters`` voters by power among the hosts that could have validated it, less the executor
    and the accuser; record everyone's power now. No voter: UNDECIDED at once."""
    params = keeper.get_params(ctx)
    executor, accuser = bech32.decode(record.executor), bech32.decode(record.validator)
    powers = keeper.stake.validator_powers(ctx)
    candidates = {h: p for h, p in keeper.get_candidates(ctx, executor, record.model).items() if h != accuser}
    beacon = keeper.get_beacon(ctx, record.vote_draw_height)
    voters = types.draw_voters(beacon, record.inference_id, candidates, params.dispute_voters)
    record.executor_power, record.accuser_power = powers.get(executor, 0), powers.get(accuser, 0)
    record.votes.extend(poc_pb2.Vote(voter=bech32.encode(v), power=candidates[v]) for v in voters)
    ctx.emit(
        "poc_dispute",
        id=record.inference_id.hex(),
        executor=record.executor,
        accuser=record.validator,
        voters=",".join(bech32.encode(v) for v in voters),
    )
    if not voters:
        settle(keeper, ctx, record, poc_pb2.STATUS_UNDECIDED)
        return
    record.vote_deadline_height = ctx.header.height + params.dispute_window_blocks
    keeper.set_validation(ctx, record)


def vote(
    keeper: PocKeeper,
    ctx: Context,
    record: poc_pb2.Validation,
    voter: bytes,
    verdict: poc_pb2.Verdict,
    score: int,
) -> poc_pb2.Validation:
    """A drawn voter's vote on a dispute (a match at least the model's threshold, as a verdict); the dispute is
    decided as soon as the votes settle it."""
    the_id, address = record.inference_id.hex(), bech32.encode(voter)
    if address == record.validator:
        raise ErrAlreadyValidated.wrap(f"inference {the_id} is disputed on {address}'s own verdict")
    ballot = next((v for v in record.votes if v.voter == address), None)
    if record.status == poc_pb2.STATUS_DISPUTED and not record.vote_deadline_height:
        raise ErrNotDrawn.wrap(
            f"inference {the_id}'s voters are drawn after the beacon of height {record.vote_draw_height}"
        )
    if ballot is None:
        raise ErrNotAssigned.wrap(f"{address} is not a drawn voter of inference {the_id}'s dispute")
    if ballot.verdict != poc_pb2.VERDICT_UNSPECIFIED:
        raise ErrAlreadyValidated.wrap(f"{address} has voted on inference {the_id}")
    if record.status in DECIDED or ctx.header.height > record.vote_deadline_height:
        raise ErrWindowClosed.wrap(f"inference {the_id}'s dispute closed at height {record.vote_deadline_height}")
    keeper.check_score(ctx, record, verdict, score)
    ballot.verdict, ballot.score, ballot.height = verdict, score, ctx.header.height
    keeper.unqueue_vote(ctx, record, voter)
    host = keeper.get_host(ctx, voter)
    host.votes += 1
    keeper.set_host(ctx, host)
    keeper.report_validation_work(ctx, record, voter)
    ctx.emit("poc_vote", id=the_id, voter=address, verdict=poc_pb2.Verdict.Name(verdict), score=str(score))
    outcome = types.dispute_outcome(record.votes)
    if outcome is not None:
        settle(keeper, ctx, record, outcome)
    else:
        keeper.set_validation(ctx, record)
    return record


def close(keeper: PocKeeper, ctx: Context, record: poc_pb2.Validation) -> None:
    """The voting closed: the voters that did not vote missed; decided on the votes sent."""
    for voter in awaited(record):
        host = keeper.get_host(ctx, voter)
        host.missed += 1
        keeper.set_host(ctx, host)
    settle(keeper, ctx, record, types.dispute_outcome(record.votes) or poc_pb2.STATUS_UNDECIDED)


def settle(keeper: PocKeeper, ctx: Context, record: poc_pb2.Validation, outcome: poc_pb2.Status) -> None:
    """Decide the dispute: slash the losing side (paid to the winning side by power), update the standings, and
    settle the record (out of the deadline queue and the voters' index, into the prune queue)."""
    if record.vote_deadline_height:
        keeper.unqueue_dispute(ctx, record)
    executor, accuser = bech32.decode(record.executor), bech32.decode(record.validator)
    record.status, record.decided_height = outcome, ctx.header.height
    record.prune_height = ctx.header.height + keeper.get_params(ctx).retention_blocks
    if outcome == poc_pb2.STATUS_INVALIDATED:
        honest = [(accuser, record.accuser_power), *side(record, poc_pb2.VERDICT_MISMATCH)]
        record.refunded = keeper.inference.invalidate(
            ctx, record.inference_id, executor, bech32.decode(record.requester), record.denom, record.payment
        )
        record.slashed = str(slash(keeper, ctx, record, executor, honest, "poc_invalid"))
        standing.invalidated(keeper, ctx, executor)
    elif outcome == poc_pb2.STATUS_CLEARED:
        honest = [(executor, record.executor_power), *side(record, poc_pb2.VERDICT_MATCH)]
        record.slashed = str(slash(keeper, ctx, record, accuser, honest, "poc_false_accusation"))
        standing.validated(keeper, ctx, executor)
        host = keeper.get_host(ctx, accuser)
        host.accusations_lost += 1
        keeper.set_host(ctx, host)
    keeper.set_validation(ctx, record)
    ctx.emit(
        "poc_decided",
        id=record.inference_id.hex(),
        executor=record.executor,
        accuser=record.validator,
        status=poc_pb2.Status.Name(outcome),
        slashed=record.slashed,
    )


def side(record: poc_pb2.Validation, verdict: poc_pb2.Verdict) -> list[tuple[bytes, int]]:
    """The voters that voted ``verdict``, with their power."""
    return [(bech32.decode(v.voter), v.power) for v in record.votes if v.verdict == verdict]


def slash(
    keeper: PocKeeper,
    ctx: Context,
    record: poc_pb2.Validation,
    loser: bytes,
    honest: list[tuple[bytes, int]],
    reason: str,
) -> int:
    """``dispute_slash_fraction`` of the loser's collateral to the honest side pro rata to their power (x/slashing:
    the rest to the community pool); the amount taken."""
    share = slash_fraction(keeper.get_params(ctx))
    return keeper.slashing.slash(ctx, loser, share, reason, honest, infraction_height=record.finish_height)
