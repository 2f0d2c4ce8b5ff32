"""x/poc messages: the drawn validator's verdict and the authority's params."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2, tx_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.poc import keys, verdicts
from x.poc.errors import ErrBadInferenceId, ErrBadScore, ErrBadVerdict
from x.poc.keeper import PocKeeper
from x.poc.params import validate_params
from x.poc.types import SCORE_SCALE


def validate_validation(msg: tx_pb2.MsgValidateInference) -> None:
    """A validator address, a 32-byte id, a verdict, a score in parts per million."""
    parse_address(msg.validator, "validator")
    if len(msg.inference_id) != keys.ID_BYTES:
        raise ErrBadInferenceId.wrap(f"inference id is {len(msg.inference_id)} bytes")
    if msg.verdict not in (poc_pb2.VERDICT_MATCH, poc_pb2.VERDICT_MISMATCH):
        raise ErrBadVerdict.wrap(f"verdict {msg.verdict}")
    if msg.score > SCORE_SCALE:
        raise ErrBadScore.wrap(f"score {msg.score} exceeds {SCORE_SCALE}")


def handle_validation(
    ctx: Context, keeper: PocKeeper, msg: tx_pb2.MsgValidateInference
) -> tx_pb2.MsgValidateInferenceResponse:
    validator = parse_address(msg.validator, "validator")
    record = verdicts.validate(keeper, ctx, msg.inference_id, validator, msg.verdict, msg.score)
    return tx_pb2.MsgValidateInferenceResponse(status=record.status)


def routes(keeper: PocKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgValidateInference): MsgRoute(
            tx_pb2.MsgValidateInference,
            lambda msg: [parse_address(msg.validator, "validator")],
            validate_validation,
            lambda ctx, msg: handle_validation(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        ),
    }
