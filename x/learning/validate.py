"""Stateless checks, shared by the messages and by the genesis records that carry the same fields."""

from __future__ import annotations

from google.protobuf.message import Message

from protogen.gonka.learning.v1 import learning_pb2, tx_pb2
from sdk.address import parse_address
from sdk.coins import parse_amount
from x.learning import keys
from x.learning.errors import ErrInvalidHash, ErrInvalidRun

RUN_HASHES = ("config_hash", "initial_weights_hash")
CHECKPOINT_HASHES = (
    "start_weights_hash",
    "weights_hash",
    "optimizer_hash",
    "data_order_hash",
    "config_hash",
    "global_weights_hash",
    "outer_momentum_hash",
)
VERDICT_HASHES = ("replay_weights_hash", "replay_optimizer_hash")


def require_hashes(message: Message, fields: tuple[str, ...]) -> None:
    for name in fields:
        size = len(getattr(message, name))
        if size != keys.HASH_LEN:
            raise ErrInvalidHash.wrap(f"{name} is {size} bytes")


def validate_run(run: learning_pb2.TrainingRun | tx_pb2.MsgCreateTrainingRun) -> None:
    parse_address(run.creator, "creator")
    require_hashes(run, RUN_HASHES)
    if not run.workers:
        raise ErrInvalidRun.wrap("a run needs at least one worker")
    for worker in run.workers:
        parse_address(worker, "worker")
    if len(set(run.workers)) != len(run.workers):
        raise ErrInvalidRun.wrap("workers must be distinct")
    if run.inner_steps == 0 or run.rounds == 0:
        raise ErrInvalidRun.wrap("inner_steps and rounds must be positive")
    if len(run.preset.encode()) > keys.MAX_PRESET_LEN:
        raise ErrInvalidRun.wrap(f"preset is longer than {keys.MAX_PRESET_LEN} bytes")
    budget = parse_amount(run.budget, "budget")
    if budget < run.rounds * len(run.workers):
        raise ErrInvalidRun.wrap(f"budget {budget} is less than 1 per worker and round")


def validate_checkpoint(checkpoint: learning_pb2.Checkpoint | tx_pb2.MsgCommitCheckpoint) -> None:
    parse_address(checkpoint.worker, "worker")
    require_hashes(checkpoint, CHECKPOINT_HASHES)


def validate_verdict(verdict: learning_pb2.Verdict | tx_pb2.MsgSubmitVerdict) -> None:
    parse_address(verdict.verifier, "verifier")
    parse_address(verdict.worker, "worker")
    require_hashes(verdict, VERDICT_HASHES)


def validate_claim(msg: tx_pb2.MsgClaimTrainingReward) -> None:
    parse_address(msg.worker, "worker")
