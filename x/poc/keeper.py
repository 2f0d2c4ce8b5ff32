"""PoC V2's sampling on chain (README.md): each finished inference queued for its draw, the draw in the end block
after its beacon height, the drawn validator's verdict, and the missed windows; a mismatch's dispute is
``disputes.py``, a host's standing ``standing.py``.

x/inference calls ``on_inference_finished`` (app.py wires it as a finish hook); the end block runs
``process_block``: draws due, disputes' voters drawn, windows closed, settled records pruned, in that order.
"""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context, PrefixStore
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT
from x.poc import disputes, keys, standing, types
from x.poc.errors import (
    ErrAlreadyValidated,
    ErrNotAssigned,
    ErrNotDrawn,
    ErrNotSelected,
    ErrUnknownInference,
    ErrWindowClosed,
)
from x.poc.expected_keepers import (
    BlsKeeper,
    EpochsKeeper,
    InferenceKeeper,
    RewardsKeeper,
    SlashingKeeper,
    StakeKeeper,
)
from x.poc.params import default_params, max_rate, min_rate

Status = poc_pb2.Status
SETTLED = (
    poc_pb2.STATUS_NOT_SELECTED,
    poc_pb2.STATUS_VALIDATED,
    poc_pb2.STATUS_MISSED,
    poc_pb2.STATUS_NO_VALIDATOR,
    *disputes.DECIDED,
)
"""Statuses whose record is pruned ``retention_blocks`` after it settled (a dispute stays until decided)."""


class PocKeeper:
    """Owns the ``poc/`` prefix."""

    def __init__(
        self,
        stake: StakeKeeper,
        bls: BlsKeeper,
        inference: InferenceKeeper,
        epochs: EpochsKeeper,
        slashing: SlashingKeeper,
        rewards: RewardsKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        self.stake = stake
        self.bls = bls
        self.inference = inference
        self.epochs = epochs
        self.slashing = slashing
        self.rewards = rewards
        self.authority = authority

    @staticmethod
    def _store(ctx: Context) -> PrefixStore:
        return ctx.kv(keys.STORE_PREFIX)

    # --- params and records -------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> poc_pb2.Params:
        raw = self._store(ctx).get(keys.PARAMS_KEY)
        return poc_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: poc_pb2.Params) -> None:
        self._store(ctx).set(keys.PARAMS_KEY, params.SerializeToString())

    def get_validation(self, ctx: Context, inference_id: bytes) -> poc_pb2.Validation | None:
        raw = self._store(ctx).get(keys.validation_key(inference_id))
        return poc_pb2.Validation.FromString(raw) if raw else None

    def validations(self, ctx: Context) -> list[poc_pb2.Validation]:
        """Every record kept, in id order."""
        return [poc_pb2.Validation.FromString(v) for _, v in self._store(ctx).iterate(keys.VALIDATION_PREFIX)]

    def set_validation(self, ctx: Context, record: poc_pb2.Validation) -> None:
        """Store a record and put it in the queue its status calls for (genesis import rebuilds them so)."""
        store = self._store(ctx)
        store.set(keys.validation_key(record.inference_id), record.SerializeToString())
        if record.status == poc_pb2.STATUS_PENDING:
            store.set(keys.draw_key(record.draw_height, record.inference_id), PRESENT)
        elif record.status == poc_pb2.STATUS_SELECTED:
            store.set(keys.deadline_key(record.deadline_height, record.inference_id), PRESENT)
            validator = bech32.decode(record.validator)
            store.set(keys.assigned_key(validator, record.deadline_height, record.inference_id), PRESENT)
        elif record.status == poc_pb2.STATUS_DISPUTED and not record.vote_deadline_height:
            store.set(keys.vote_draw_key(record.vote_draw_height, record.inference_id), PRESENT)
        elif record.status == poc_pb2.STATUS_DISPUTED:
            store.set(keys.deadline_key(record.vote_deadline_height, record.inference_id), PRESENT)
            for voter in disputes.awaited(record):
                store.set(keys.assigned_key(voter, record.vote_deadline_height, record.inference_id), PRESENT)
        elif record.status in SETTLED:
            store.set(keys.prune_key(record.prune_height, record.inference_id), PRESENT)

    def unqueue_selected(self, ctx: Context, record: poc_pb2.Validation) -> None:
        """Take a selected record out of the deadline queue and its validator's index (a verdict, a missed window)."""
        store = self._store(ctx)
        store.delete(keys.deadline_key(record.deadline_height, record.inference_id))
        validator = bech32.decode(record.validator)
        store.delete(keys.assigned_key(validator, record.deadline_height, record.inference_id))

    def unqueue_dispute(self, ctx: Context, record: poc_pb2.Validation) -> None:
        """Take a disputed record out of the deadline queue and its voters' index (its decision)."""
        store = self._store(ctx)
        store.delete(keys.deadline_key(record.vote_deadline_height, record.inference_id))
        for voter in disputes.awaited(record):
            store.delete(keys.assigned_key(voter, record.vote_deadline_height, record.inference_id))

    def unqueue_vote(self, ctx: Context, record: poc_pb2.Validation, voter: bytes) -> None:
        self._store(ctx).delete(keys.assigned_key(voter, record.vote_deadline_height, record.inference_id))

    def assigned(self, ctx: Context, validator: bytes) -> list[poc_pb2.Validation]:
        """The selected inferences awaiting ``validator``'s verdict, and the disputes awaiting its vote, earliest
        deadline first."""
        prefix = keys.assigned_prefix(validator)
        found = (
            self.get_validation(ctx, key[len(prefix) + keys.HEIGHT_BYTES :])
            for key, _ in self._store(ctx).iterate(prefix)
        )
        return [record for record in found if record is not None]

    def queue(self, ctx: Context, prefix: bytes, through: int | None = None) -> list[tuple[int, bytes]]:
        """A queue's (height, id) entries in order; with ``through``, those at that height or below."""
        end = None if through is None else prefix + keys.u64(through + 1)
        return [keys.queue_entry(prefix, key) for key, _ in self._store(ctx).iterate(prefix, end=end)]

    def get_host(self, ctx: Context, host: bytes) -> poc_pb2.HostRecord:
        """A host's record; a host with none reads as active with zero counts."""
        raw = self._store(ctx).get(keys.host_key(host))
        if raw:
            return poc_pb2.HostRecord.FromString(raw)
        return poc_pb2.HostRecord(host=bech32.encode(host), status=poc_pb2.HOST_STATUS_ACTIVE)

    def set_host(self, ctx: Context, record: poc_pb2.HostRecord) -> None:
        self._store(ctx).set(keys.host_key(bech32.decode(record.host)), record.SerializeToString())

    def hosts(self, ctx: Context) -> list[poc_pb2.HostRecord]:
        return [poc_pb2.HostRecord.FromString(v) for _, v in self._store(ctx).iterate(keys.HOST_PREFIX)]

    # --- the draw -----------------------------------------------------------------------------------

    def get_rate(self, ctx: Context, executor: bytes) -> Fraction:
        """The chance an inference of ``executor`` is selected now (types.compute_rate of its reputation)."""
        params = self.get_params(ctx)
        reputation = self.get_host(ctx, executor).reputation
        return types.compute_rate(min_rate(params), max_rate(params), params.reputation_scale, reputation)

    def get_beacon(self, ctx: Context, height: int) -> bytes:
        """x/bls's beacon of ``height``; without its certificate, the fallback of the last app hash."""
        beacon = self.bls.beacon(ctx, height)
        if beacon is not None:
            return beacon
        last = self.bls.last_commitment(ctx)
        return types.fallback_beacon(ctx.header.chain_id, height, last[1] if last else b"")

    def get_candidates(self, ctx: Context, executor: bytes, model: str) -> dict[bytes, int]:
        """Who may validate: the hosts in the validator set in force, by power, but the executor and those with no
        node serving ``model``."""
        return {
            host: power
            for host, power in self.stake.validator_powers(ctx).items()
            if host != executor and power > 0 and self.inference.serves(ctx, host, model)
        }

    def on_inference_finished(self, ctx: Context, inference: inference_pb2.Inference) -> None:
        """x/inference's finish hook: queue the inference's draw at the beacon of a later height."""
        delay = self.get_params(ctx).draw_delay_blocks
        record = poc_pb2.Validation(
            inference_id=inference.id,
            executor=inference.executor,
            model=inference.model,
            work_units=inference.prompt_tokens + inference.completion_tokens,
            requester=inference.requester,
            denom=inference.denom,
            payment=inference.payment,
            finish_height=inference.finish_height,
            draw_height=inference.finish_height + delay,
            status=poc_pb2.STATUS_PENDING,
        )
        self.set_validation(ctx, record)

    def draw(self, ctx: Context, record: poc_pb2.Validation) -> None:
        """Draw a pending record with its beacon: not selected, selected with its validator and deadline, or
        selected with no one to validate it."""
        params = self.get_params(ctx)
        executor = bech32.decode(record.executor)
        rate = self.get_rate(ctx, executor)
        beacon = self.get_beacon(ctx, record.draw_height)
        record.rate, record.beacon = types.rate_text(rate), beacon
        height = ctx.header.height
        if not types.is_selected(beacon, record.inference_id, rate):
            record.status = poc_pb2.STATUS_NOT_SELECTED
        else:
            validator = types.draw_validator(
                beacon, record.inference_id, self.get_candidates(ctx, executor, record.model)
            )
            if validator is None:
                record.status = poc_pb2.STATUS_NO_VALIDATOR
            else:
                record.status = poc_pb2.STATUS_SELECTED
                record.validator = bech32.encode(validator)
                record.deadline_height = height + params.validation_window_blocks
        if record.status in SETTLED:
            record.prune_height = height + params.retention_blocks
        self.set_validation(ctx, record)
        ctx.emit(
            "poc_draw",
            id=record.inference_id.hex(),
            executor=record.executor,
            status=Status.Name(record.status),
            rate=record.rate,
            validator=record.validator,
            deadline=str(record.deadline_height),
        )

    # --- the verdict ---------------------------------------------------------------------------------

    def validate(
        self, ctx: Context, inference_id: bytes, validator: bytes, verdict: poc_pb2.Verdict, score: int
    ) -> poc_pb2.Validation:
        """The drawn validator's verdict (verdict and score already checked statelessly): match grows the
        executor's reputation, mismatch opens a dispute; both count as the validator's work. On a disputed
        inference, a drawn voter's vote (``disputes.vote``)."""
        record = self.get_validation(ctx, inference_id)
        the_id = inference_id.hex()
        if record is None:
            raise ErrUnknownInference.wrap(f"no validation record for inference {the_id}")
        if record.status == poc_pb2.STATUS_PENDING:
            raise ErrNotDrawn.wrap(f"inference {the_id} is drawn after the beacon of height {record.draw_height}")
        if record.status in (poc_pb2.STATUS_NOT_SELECTED, poc_pb2.STATUS_NO_VALIDATOR):
            raise ErrNotSelected.wrap(f"inference {the_id} is {Status.Name(record.status)}")
        if record.status == poc_pb2.STATUS_DISPUTED or record.status in disputes.DECIDED:
            return disputes.vote(self, ctx, record, validator, verdict, score)
        if bech32.decode(record.validator) != validator:
            raise ErrNotAssigned.wrap(f"inference {the_id} is {record.validator}'s to validate")
        if record.status == poc_pb2.STATUS_VALIDATED:
            raise ErrAlreadyValidated.wrap(f"inference {the_id} is {Status.Name(record.status)}")
        height = ctx.header.height
        if record.status == poc_pb2.STATUS_MISSED or height > record.deadline_height:
            raise ErrWindowClosed.wrap(f"inference {the_id}'s window closed at height {record.deadline_height}")
        self.unqueue_selected(ctx, record)
        record.verdict, record.score, record.verdict_height = verdict, score, height
        validator_record = self.get_host(ctx, validator)
        validator_record.validations += 1
        self.set_host(ctx, validator_record)
        self.report_validation_work(ctx, record, validator)
        if verdict == poc_pb2.VERDICT_MATCH:
            record.status = poc_pb2.STATUS_VALIDATED
            record.prune_height = height + self.get_params(ctx).retention_blocks
            standing.validated(self, ctx, bech32.decode(record.executor))
        else:
            record.status = poc_pb2.STATUS_DISPUTED
            record.vote_draw_height = height + self.get_params(ctx).draw_delay_blocks
            executor_record = self.get_host(ctx, bech32.decode(record.executor))
            executor_record.disputed += 1
            self.set_host(ctx, executor_record)
        self.set_validation(ctx, record)
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

    def report_validation_work(self, ctx: Context, record: poc_pb2.Validation, validator: bytes) -> None:
        """A verdict or a vote sent in time is the validator's work: the inference's tokens, as its executor's."""
        self.rewards.report_work(ctx, self.epochs.current_epoch(ctx).number, validator, record.work_units)

    # --- epochs --------------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        standing.reinstate(self, ctx, epoch)

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        return None

    # --- the end block -------------------------------------------------------------------------------

    def miss(self, ctx: Context, record: poc_pb2.Validation) -> None:
        """A selected record whose window closed without a verdict: missed, counted against its validator."""
        record.status = poc_pb2.STATUS_MISSED
        record.prune_height = ctx.header.height + self.get_params(ctx).retention_blocks
        self.set_validation(ctx, record)
        validator = self.get_host(ctx, bech32.decode(record.validator))
        validator.missed += 1
        self.set_host(ctx, validator)
        ctx.emit("poc_missed", id=record.inference_id.hex(), executor=record.executor, validator=record.validator)

    def process_draws(self, ctx: Context, height: int) -> None:
        """Draw every pending record whose beacon height is before ``height`` (its certificate is carried by the
        block after it)."""
        store = self._store(ctx)
        for draw_height, inference_id in self.queue(ctx, keys.DRAW_PREFIX, through=height - 1):
            store.delete(keys.draw_key(draw_height, inference_id))
            record = self.get_validation(ctx, inference_id)
            if record is not None and record.status == poc_pb2.STATUS_PENDING:
                self.draw(ctx, record)

    def process_deadlines(self, ctx: Context, height: int) -> None:
        """Every selected record whose last accepted height is ``height`` or before: missed; every dispute whose
        voting closed: decided on the votes sent."""
        store = self._store(ctx)
        for deadline, inference_id in self.queue(ctx, keys.DEADLINE_PREFIX, through=height):
            record = self.get_validation(ctx, inference_id)
            if record is not None and record.status == poc_pb2.STATUS_SELECTED:
                self.unqueue_selected(ctx, record)
                self.miss(ctx, record)
            elif record is not None and record.status == poc_pb2.STATUS_DISPUTED:
                disputes.close(self, ctx, record)
            else:
                store.delete(keys.deadline_key(deadline, inference_id))

    def process_pruning(self, ctx: Context, height: int) -> None:
        store = self._store(ctx)
        for prune_height, inference_id in self.queue(ctx, keys.PRUNE_PREFIX, through=height):
            store.delete(keys.prune_key(prune_height, inference_id))
            record = self.get_validation(ctx, inference_id)
            if record is not None and record.status in SETTLED:
                store.delete(keys.validation_key(inference_id))

    def process_vote_draws(self, ctx: Context, height: int) -> None:
        """Draw the voters of every dispute whose beacon height is before ``height``."""
        store = self._store(ctx)
        for draw_height, inference_id in self.queue(ctx, keys.VOTE_DRAW_PREFIX, through=height - 1):
            store.delete(keys.vote_draw_key(draw_height, inference_id))
            record = self.get_validation(ctx, inference_id)
            if record is not None and record.status == poc_pb2.STATUS_DISPUTED and not record.vote_deadline_height:
                disputes.draw_voters(self, ctx, record)

    def process_block(self, ctx: Context, height: int) -> None:
        self.process_draws(ctx, height)
        self.process_vote_draws(ctx, height)
        self.process_deadlines(ctx, height)
        self.process_pruning(ctx, height)
