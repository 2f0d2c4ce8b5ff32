"""PoC V2's state on chain (README.md): the records and their queues, each finished inference queued for its draw
(``on_inference_finished``, x/inference's finish hook, wired in app.py), the draw itself and a missed window.
What builds on it: the verdict (verdicts.py), a dispute (disputes.py), a host's standing (standing.py), the end
block (blocks.py) and the epoch hooks (hooks.py).
"""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context, PrefixStore
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT
from x.poc import keys, types
from x.poc.errors import ErrScoreBelowThreshold
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
    *types.DECIDED,
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
            for voter in types.awaited(record):
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
        for voter in types.awaited(record):
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

    def is_invalid(self, ctx: Context, host: bytes) -> bool:
        """Whether ``host`` is INVALID: x/rewards pays it nothing for the epoch, x/sprint gives it no weight."""
        return self.get_host(ctx, host).status == poc_pb2.HOST_STATUS_INVALID

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

    def check_score(self, ctx: Context, record: poc_pb2.Validation, verdict: poc_pb2.Verdict, score: int) -> None:
        """A MATCH (a verdict or a vote) must score at least its model's threshold (x/inference's governance
        parameter): one below says match for a re-execution the model's own rule calls a mismatch (``poc/11``).
        A MISMATCH stands at any score: a wrong token fails an answer however close its logprobs."""
        if verdict != poc_pb2.VERDICT_MATCH:
            return
        threshold = self.inference.verify_threshold(ctx, record.model)
        if score < threshold:
            raise ErrScoreBelowThreshold.wrap(
                f"inference {record.inference_id.hex()}: a match scored {score}, below model {record.model!r}'s "
                f"threshold {threshold} (parts per million)"
            )

    def report_validation_work(self, ctx: Context, record: poc_pb2.Validation, validator: bytes) -> None:
        """A verdict or a vote sent in time is the validator's work: the inference's tokens, as its executor's."""
        self.rewards.report_work(ctx, self.epochs.current_epoch(ctx).number, validator, record.work_units)

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
