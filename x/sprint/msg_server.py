"""x/sprint messages: a host's commitment, a validator's verdicts (several per tx), the authority's params."""

from __future__ import annotations

from protogen.gonka.sprint.v1 import tx_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.sprint.errors import ErrBadFailures, ErrBadRoot, ErrEmptyCommitment
from x.sprint.keeper import SprintKeeper
from x.sprint.params import validate_params
from x.sprint.types import HASH_BYTES


def validate_commit(msg: tx_pb2.MsgSprintCommit) -> None:
    parse_address(msg.host, "host")
    if len(msg.root) != HASH_BYTES:
        raise ErrBadRoot.wrap(f"root is {len(msg.root)} bytes")
    if msg.count == 0:
        raise ErrEmptyCommitment.wrap("count is 0")


def validate_validation(msg: tx_pb2.MsgSprintValidation) -> None:
    parse_address(msg.validator, "validator")
    parse_address(msg.host, "host")
    if msg.failures > msg.samples:
        raise ErrBadFailures.wrap(f"{msg.failures} failures of {msg.samples} samples")


def handle_commit(ctx: Context, keeper: SprintKeeper, msg: tx_pb2.MsgSprintCommit) -> tx_pb2.MsgSprintCommitResponse:
    keeper.commit(ctx, parse_address(msg.host, "host"), msg.epoch, msg.root, msg.count, msg.params_hash)
    return tx_pb2.MsgSprintCommitResponse()


def handle_validation(
    ctx: Context, keeper: SprintKeeper, msg: tx_pb2.MsgSprintValidation
) -> tx_pb2.MsgSprintValidationResponse:
    validator, host = parse_address(msg.validator, "validator"), parse_address(msg.host, "host")
    return tx_pb2.MsgSprintValidationResponse(
        fraud=keeper.validate(ctx, validator, msg.epoch, host, msg.samples, msg.failures)
    )


def routes(keeper: SprintKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgSprintCommit): MsgRoute(
            tx_pb2.MsgSprintCommit,
            lambda msg: [parse_address(msg.host, "host")],
            validate_commit,
            lambda ctx, msg: handle_commit(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgSprintValidation): MsgRoute(
            tx_pb2.MsgSprintValidation,
            lambda msg: [parse_address(msg.validator, "validator")],
            validate_validation,
            lambda ctx, msg: handle_validation(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        ),
    }
