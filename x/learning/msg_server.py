"""x/learning messages: signers from the proto's ``cosmos.msg.v1.signer`` option, stateless checks, handlers."""

from __future__ import annotations

from typing import TypeVar

from cosmpy.protos.cosmos.msg.v1 import msg_pb2
from google.protobuf.message import Message

from protogen.gonka.learning.v1 import learning_pb2, tx_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.learning import keys, payments, verification
from x.learning.keeper import LearningKeeper
from x.learning.params import validate_params
from x.learning.validate import validate_checkpoint, validate_claim, validate_run, validate_verdict

R = TypeVar("R", bound=Message)


def signers(msg: Message) -> list[bytes]:
    """The address in the field the proto declares as signer, as the Cosmos SDK reads it."""
    fields = msg.DESCRIPTOR.GetOptions().Extensions[msg_pb2.signer]
    return [parse_address(getattr(msg, field), field) for field in fields]


def record_from(msg: Message, record_type: type[R]) -> R:
    """The store record carrying the message's fields by name; the record's own fields start at zero."""
    return record_type(**{field.name: getattr(msg, field.name) for field in msg.DESCRIPTOR.fields})


def _emit_message(ctx: Context, sender: str) -> None:
    ctx.emit("message", module=keys.MODULE_NAME, sender=sender)


def handle_create_run(
    ctx: Context, keeper: LearningKeeper, msg: tx_pb2.MsgCreateTrainingRun
) -> tx_pb2.MsgCreateTrainingRunResponse:
    run = record_from(msg, learning_pb2.TrainingRun)
    run_id = payments.open_run(keeper, ctx, run)
    ctx.emit(
        "create_run",
        run_id=str(run_id),
        creator=msg.creator,
        workers=",".join(msg.workers),
        rounds=str(msg.rounds),
        config_hash=msg.config_hash.hex(),
        budget=f"{msg.budget}{run.denom}",
    )
    _emit_message(ctx, msg.creator)
    return tx_pb2.MsgCreateTrainingRunResponse(run_id=run_id)


def handle_commit_checkpoint(
    ctx: Context, keeper: LearningKeeper, msg: tx_pb2.MsgCommitCheckpoint
) -> tx_pb2.MsgCommitCheckpointResponse:
    verification.commit(keeper, ctx, record_from(msg, learning_pb2.Checkpoint))
    ctx.emit(
        "commit_checkpoint",
        run_id=str(msg.run_id),
        round=str(msg.round),
        worker=msg.worker,
        weights_hash=msg.weights_hash.hex(),
        global_weights_hash=msg.global_weights_hash.hex(),
    )
    _emit_message(ctx, msg.worker)
    return tx_pb2.MsgCommitCheckpointResponse()


def handle_submit_verdict(
    ctx: Context, keeper: LearningKeeper, msg: tx_pb2.MsgSubmitVerdict
) -> tx_pb2.MsgSubmitVerdictResponse:
    verification.submit_verdict(keeper, ctx, record_from(msg, learning_pb2.Verdict))
    ctx.emit(
        "verdict",
        run_id=str(msg.run_id),
        round=str(msg.round),
        worker=msg.worker,
        verifier=msg.verifier,
        valid=str(msg.valid).lower(),
    )
    _emit_message(ctx, msg.verifier)
    return tx_pb2.MsgSubmitVerdictResponse()


def handle_claim(
    ctx: Context, keeper: LearningKeeper, msg: tx_pb2.MsgClaimTrainingReward
) -> tx_pb2.MsgClaimTrainingRewardResponse:
    amount = payments.claim(keeper, ctx, msg.worker, msg.run_id, msg.round)
    denom = keeper.existing_run(ctx, msg.run_id).denom
    ctx.emit("claim_reward", run_id=str(msg.run_id), round=str(msg.round), worker=msg.worker, amount=f"{amount}{denom}")
    _emit_message(ctx, msg.worker)
    return tx_pb2.MsgClaimTrainingRewardResponse(amount=str(amount))


def routes(keeper: LearningKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgCreateTrainingRun): MsgRoute(
            tx_pb2.MsgCreateTrainingRun,
            signers,
            validate_run,
            lambda ctx, msg: handle_create_run(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgCommitCheckpoint): MsgRoute(
            tx_pb2.MsgCommitCheckpoint,
            signers,
            validate_checkpoint,
            lambda ctx, msg: handle_commit_checkpoint(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgSubmitVerdict): MsgRoute(
            tx_pb2.MsgSubmitVerdict,
            signers,
            validate_verdict,
            lambda ctx, msg: handle_submit_verdict(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgClaimTrainingReward): MsgRoute(
            tx_pb2.MsgClaimTrainingReward,
            signers,
            validate_claim,
            lambda ctx, msg: handle_claim(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        ),
    }
