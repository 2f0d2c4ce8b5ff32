"""The drawn validator's verdict on a selected inference (README.md, "Messages"): a match grows the executor's
standing, a mismatch opens a dispute; on a disputed inference, a drawn voter's vote (``disputes.vote``)."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.poc import disputes, standing
from x.poc.errors import (
    ErrAlreadyValidated,
    ErrNotAssigned,
    ErrNotDrawn,
    ErrNotSelected,
    ErrUnknownInference,
    ErrWindowClosed,
)
from x.poc.keeper import PocKeeper, Status
from x.poc.types import DECIDED


def validate(
    keeper: PocKeeper, ctx: Context, inference_id: bytes, validator: bytes, verdict: poc_pb2.Verdict, score: int
) -> poc_pb2.Validation:
    """The drawn validator's verdict (verdict and score already checked statelessly; a match's score against the
    model's threshold checked last, so a stranger learns only "not yours"): match grows the executor's reputation,
    mismatch opens a dispute; both count as the validator's work. On a disputed inference, a drawn voter's vote
    (``disputes.vote``)."""
    record = keeper.get_validation(ctx, inference_id)
    the_id = inference_id.hex()
    if record is None:
        raise ErrUnknownInference.wrap(f"no validation record for inference {the_id}")
    if record.status == poc_pb2.STATUS_PENDING:
        raise ErrNotDrawn.wrap(f"inference {the_id} is drawn after the beacon of height {record.draw_height}")
    if record.status in (poc_pb2.STATUS_NOT_SELECTED, poc_pb2.STATUS_NO_VALIDATOR):
        raise ErrNotSelected.wrap(f"inference {the_id} is {Status.Name(record.status)}")
    if record.status == poc_pb2.STATUS_DISPUTED or record.status in DECIDED:
        return disputes.vote(keeper, ctx, record, validator, verdict, score)
    if bech32.decode(record.validator) != validator:
        raise ErrNotAssigned.wrap(f"inference {the_id} is {record.validator}'s to validate")
    if record.status == poc_pb2.STATUS_VALIDATED:
        raise ErrAlreadyValidated.wrap(f"inference {the_id} is {Status.Name(record.status)}")
    height = ctx.header.height
    if record.status == poc_pb2.STATUS_MISSED or height > record.deadline_height:
        raise ErrWindowClosed.wrap(f"inference {the_id}'s window closed at height {record.deadline_height}")
    keeper.check_score(ctx, record, verdict, score)
    keeper.unqueue_selected(ctx, record)
    record.verdict, record.score, record.verdict_height = verdict, score, height
    validator_record = keeper.get_host(ctx, validator)
    validator_record.validations += 1
    keeper.set_host(ctx, validator_record)
    keeper.report_validation_work(ctx, record, validator)
    if verdict == poc_pb2.VERDICT_MATCH:
        record.status = poc_pb2.STATUS_VALIDATED
        record.prune_height = height + keeper.get_params(ctx).retention_blocks
        standing.validated(keeper, ctx, bech32.decode(record.executor))
    else:
        record.status = poc_pb2.STATUS_DISPUTED
        record.vote_draw_height = height + keeper.get_params(ctx).draw_delay_blocks
        executor_record = keeper.get_host(ctx, bech32.decode(record.executor))
        executor_record.disputed += 1
        keeper.set_host(ctx, executor_record)
    keeper.set_validation(ctx, record)
    ctx.emit(
        "poc_validation",
        id=the_id,
        executor=record.executor,
        validator=record.validator,
        verdict=poc_pb2.Verdict.Name(verdict),
        score=str(score),
        status=Status.Name(record.status),
    )
    return record
