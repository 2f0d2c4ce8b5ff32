"""DiLoCo training runs and their Proof-of-Learning record; every rule that needs state is checked here.

A round's agreed global state is not stored twice: it is the global hashes of the round's checkpoints,
which all agree (the first commit sets them, later ones must match). The draw of a checkpoint's verifiers
and its settlement are verification.py; the escrow, the pay and the refunds are payments.py.
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message

from protogen.gonka.learning.v1 import learning_pb2
from sdk.address import module_address
from sdk.context import Context, PrefixStore
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT
from x.learning import keys
from x.learning.errors import (
    ErrCheckpointExists,
    ErrCheckpointNotFound,
    ErrConfigMismatch,
    ErrGlobalMismatch,
    ErrNotDrawn,
    ErrNotHost,
    ErrNotWorker,
    ErrRoundOutOfRange,
    ErrRunLimits,
    ErrRunNotFound,
    ErrSelfVerdict,
    ErrStartMismatch,
    ErrVerdictExists,
)
from x.learning.expected_keepers import (
    AccountKeeper,
    BankKeeper,
    BeaconKeeper,
    EpochsKeeper,
    RewardsKeeper,
    SlashingKeeper,
    StakeKeeper,
    VestingKeeper,
)
from x.learning.params import default_params

R = TypeVar("R", bound=Message)


def _kv(ctx: Context) -> PrefixStore:
    return ctx.kv(keys.STORE_PREFIX)


class LearningKeeper:
    """Owns the ``learning/`` prefix and the module account ``learning`` (the runs' escrow). Records are
    written only after every rule passed."""

    def __init__(
        self,
        accounts: AccountKeeper,
        bank: BankKeeper,
        vesting: VestingKeeper,
        stake: StakeKeeper,
        slashing: SlashingKeeper,
        rewards: RewardsKeeper,
        epochs: EpochsKeeper,
        beacon: BeaconKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        """``authority``: who may change the params (``MsgUpdateParams``)."""
        self.accounts = accounts
        self.bank = bank
        self.vesting = vesting
        self.stake = stake
        self.slashing = slashing
        self.rewards = rewards
        self.epochs = epochs
        self.beacon = beacon
        self.authority = authority

    @property
    def address(self) -> bytes:
        return module_address(keys.LEARNING_ACCOUNT)

    def get_params(self, ctx: Context) -> learning_pb2.Params:
        raw = _kv(ctx).get(keys.PARAMS_KEY)
        return learning_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: learning_pb2.Params) -> None:
        _kv(ctx).set(keys.PARAMS_KEY, params.SerializeToString())

    def next_run_id(self, ctx: Context) -> int:
        raw = _kv(ctx).get(keys.NEXT_RUN_ID_KEY)
        return keys.decode_id(raw) if raw else 1

    def set_next_run_id(self, ctx: Context, run_id: int) -> None:
        _kv(ctx).set(keys.NEXT_RUN_ID_KEY, keys.encode_id(run_id))

    def records(self, ctx: Context, prefix: bytes, record_type: type[R]) -> list[R]:
        """Every record under a key prefix, in key order."""
        return [record_type.FromString(raw) for _, raw in _kv(ctx).iterate(prefix)]

    # --- runs -------------------------------------------------------------------------------------

    def get_run(self, ctx: Context, run_id: int) -> learning_pb2.TrainingRun | None:
        raw = _kv(ctx).get(keys.run_key(run_id))
        return learning_pb2.TrainingRun.FromString(raw) if raw else None

    def set_run(self, ctx: Context, run: learning_pb2.TrainingRun) -> None:
        _kv(ctx).set(keys.run_key(run.id), run.SerializeToString())

    def check_new_run(self, ctx: Context, run: learning_pb2.TrainingRun) -> None:
        """Within the params' limits, and every worker a registered host with collateral (it can be slashed)."""
        params = self.get_params(ctx)
        if len(run.workers) > params.max_workers:
            raise ErrRunLimits.wrap(f"{len(run.workers)} workers, at most {params.max_workers}")
        if run.rounds > params.max_rounds:
            raise ErrRunLimits.wrap(f"{run.rounds} rounds, at most {params.max_rounds}")
        for worker in run.workers:
            host = self.stake.get_host(ctx, bech32.decode(worker))
            if host is None or int(host.collateral) <= 0:
                raise ErrNotHost.wrap(f"{worker} is not a host with collateral")

    def create_run(self, ctx: Context, run: learning_pb2.TrainingRun) -> int:
        """Store an ACTIVE run under the next id (its budget already escrowed); returns the id."""
        run.id = self.next_run_id(ctx)
        run.created_height = ctx.header.height
        run.paid = run.refunded = "0"
        run.status = learning_pb2.RUN_STATUS_ACTIVE
        self.set_run(ctx, run)
        self.set_next_run_id(ctx, run.id + 1)
        return run.id

    def existing_run(self, ctx: Context, run_id: int) -> learning_pb2.TrainingRun:
        run = self.get_run(ctx, run_id)
        if run is None:
            raise ErrRunNotFound.wrap(f"run {run_id}")
        return run

    # --- checkpoints ------------------------------------------------------------------------------

    def get_checkpoint(self, ctx: Context, run_id: int, round_: int, worker: str) -> learning_pb2.Checkpoint | None:
        raw = _kv(ctx).get(keys.checkpoint_key(run_id, round_, bech32.decode(worker)))
        return learning_pb2.Checkpoint.FromString(raw) if raw else None

    def round_checkpoints(self, ctx: Context, run_id: int, round_: int) -> list[learning_pb2.Checkpoint]:
        """Every worker's checkpoint of the round, in worker-address order."""
        return self.records(ctx, keys.round_checkpoints_prefix(run_id, round_), learning_pb2.Checkpoint)

    def _round_global(self, ctx: Context, run_id: int, round_: int) -> learning_pb2.Checkpoint | None:
        """Any checkpoint of the round stands for its agreed global state; None before the first commit."""
        for _, raw in _kv(ctx).iterate(keys.round_checkpoints_prefix(run_id, round_)):
            return learning_pb2.Checkpoint.FromString(raw)
        return None

    def check_checkpoint(self, ctx: Context, checkpoint: learning_pb2.Checkpoint) -> None:
        """The commit rules, in order; a forged checkpoint fails the start-hash chain."""
        run = self.existing_run(ctx, checkpoint.run_id)
        if checkpoint.worker not in run.workers:
            raise ErrNotWorker.wrap(f"{checkpoint.worker} in run {run.id}")
        if checkpoint.round >= run.rounds:
            raise ErrRoundOutOfRange.wrap(f"round {checkpoint.round} of a {run.rounds}-round run")
        if self.get_checkpoint(ctx, run.id, checkpoint.round, checkpoint.worker) is not None:
            raise ErrCheckpointExists.wrap(f"run {run.id} round {checkpoint.round} worker {checkpoint.worker}")
        if checkpoint.config_hash != run.config_hash:
            raise ErrConfigMismatch.wrap(f"got {checkpoint.config_hash.hex()}, run has {run.config_hash.hex()}")
        if checkpoint.round == 0:
            expected, what = run.initial_weights_hash, "run's initial weights"
        else:
            previous = self._round_global(ctx, run.id, checkpoint.round - 1)
            if previous is None:
                raise ErrStartMismatch.wrap(f"round {checkpoint.round - 1} has no commits yet")
            expected, what = previous.global_weights_hash, f"round {checkpoint.round - 1} global weights"
        if checkpoint.start_weights_hash != expected:
            raise ErrStartMismatch.wrap(
                f"start {checkpoint.start_weights_hash.hex()} is not the {what} {expected.hex()}"
            )
        agreed = self._round_global(ctx, run.id, checkpoint.round)
        if agreed is not None and (agreed.global_weights_hash, agreed.outer_momentum_hash) != (
            checkpoint.global_weights_hash,
            checkpoint.outer_momentum_hash,
        ):
            raise ErrGlobalMismatch.wrap(
                f"round {checkpoint.round} agreed global weights {agreed.global_weights_hash.hex()}, "
                f"outer momentum {agreed.outer_momentum_hash.hex()}"
            )

    def set_checkpoint(self, ctx: Context, checkpoint: learning_pb2.Checkpoint) -> None:
        key = keys.checkpoint_key(checkpoint.run_id, checkpoint.round, bech32.decode(checkpoint.worker))
        _kv(ctx).set(key, checkpoint.SerializeToString())

    def set_pending(self, ctx: Context, checkpoint: learning_pb2.Checkpoint, pending: bool) -> None:
        """In or out of the pending index, which the end block settles from."""
        key = keys.pending_key(checkpoint.run_id, checkpoint.round, bech32.decode(checkpoint.worker))
        if pending:
            _kv(ctx).set(key, PRESENT)
        else:
            _kv(ctx).delete(key)

    def pending(self, ctx: Context) -> list[learning_pb2.Checkpoint]:
        """The PENDING checkpoints, in key order."""
        found = []
        for key, _ in _kv(ctx).iterate(keys.PENDING_PREFIX):
            run_id, round_, worker = keys.decode_pending(key)
            checkpoint = self.get_checkpoint(ctx, run_id, round_, bech32.encode(worker))
            assert checkpoint is not None, "the pending index names only stored checkpoints"
            found.append(checkpoint)
        return found

    def assigned(self, ctx: Context, verifier: bytes) -> list[learning_pb2.Checkpoint]:
        """The PENDING checkpoints that drew ``verifier`` and hold no verdict of it, in key order."""
        address = bech32.encode(verifier)
        return [
            checkpoint
            for checkpoint in self.pending(ctx)
            if any(drawn.address == address for drawn in checkpoint.verifiers)
            and _kv(ctx).get(
                keys.verdict_key(checkpoint.run_id, checkpoint.round, bech32.decode(checkpoint.worker), verifier)
            )
            is None
        ]

    def owed(self, ctx: Context, worker: str) -> list[learning_pb2.Checkpoint]:
        """The VALID checkpoints of ``worker`` not paid yet, run by run and round by round."""
        return [
            checkpoint
            for run in self.records(ctx, keys.RUN_PREFIX, learning_pb2.TrainingRun)
            if worker in run.workers
            for checkpoint in self.records(ctx, keys.run_checkpoints_prefix(run.id), learning_pb2.Checkpoint)
            if checkpoint.worker == worker and checkpoint.outcome == learning_pb2.OUTCOME_VALID and not checkpoint.paid
        ]

    # --- verdicts ---------------------------------------------------------------------------------

    def add_verdict(self, ctx: Context, verdict: learning_pb2.Verdict) -> None:
        """Store a verdict on an existing checkpoint by one of its drawn verifiers, once per verifier, and count
        it on the checkpoint."""
        checkpoint = self.existing_checkpoint(ctx, verdict.run_id, verdict.round, verdict.worker)
        worker, verifier = bech32.decode(verdict.worker), bech32.decode(verdict.verifier)
        if worker == verifier:
            raise ErrSelfVerdict.wrap(f"{verdict.verifier} committed this checkpoint")
        if all(drawn.address != verdict.verifier for drawn in checkpoint.verifiers):
            raise ErrNotDrawn.wrap(f"{verdict.verifier} on run {verdict.run_id} round {verdict.round}")
        key = keys.verdict_key(verdict.run_id, verdict.round, worker, verifier)
        if _kv(ctx).get(key) is not None:
            raise ErrVerdictExists.wrap(f"by {verdict.verifier}")
        _kv(ctx).set(key, verdict.SerializeToString())
        if verdict.valid:
            checkpoint.valid_verdicts += 1
        else:
            checkpoint.invalid_verdicts += 1
        self.set_checkpoint(ctx, checkpoint)

    def existing_checkpoint(self, ctx: Context, run_id: int, round_: int, worker: str) -> learning_pb2.Checkpoint:
        checkpoint = self.get_checkpoint(ctx, run_id, round_, worker)
        if checkpoint is None:
            raise ErrCheckpointNotFound.wrap(f"run {run_id} round {round_} worker {worker}")
        return checkpoint
