"""The Sprint race on chain: each epoch's seed and sample randomness, the hosts' commitments, the validators'
verdicts, and at the set-validators stage the weights x/stake turns into voting power (README.md).

Stage by stage (x/epochs): the race stage's first block fixes the seed from the BLS beacon; during the race,
hosts commit; the race-validation stage's first block fixes the sample randomness, after every commitment is
final; during it, validators send their verdicts; the set-validators stage's first block decides each host's
weight (``judge.py``), slashes and jails fraud, and hands the weights to x/stake, before x/stake's own hook
makes them the validator set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from google.protobuf.message import Message

from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.context import Context
from sdk.crypto import bech32, merkle
from sdk.params import GOV_AUTHORITY
from x.sprint import keys, types
from x.sprint.errors import (
    ErrBadSamples,
    ErrCountShrinks,
    ErrDuplicateValidation,
    ErrNoCommitment,
    ErrNoPubkey,
    ErrNotHost,
    ErrNotValidator,
    ErrParamsHash,
    ErrSelfValidation,
    ErrWrongEpoch,
    ErrWrongStage,
)
from x.sprint.expected_keepers import (
    AccountKeeper,
    BlsKeeper,
    EpochsKeeper,
    InferenceKeeper,
    SlashingKeeper,
    StakeKeeper,
    Standing,
)
from x.sprint.judge import fraud_finders, judge
from x.sprint.params import default_params, false_flag, fraud_slash_fraction, honest_mismatch
from x.sprint.verdict import is_fraud

M = TypeVar("M", bound=Message)
STAGE_NAME = epochs_pb2.Stage.Name


class SprintKeeper:
    """Owns the ``sprint/`` prefix."""

    def __init__(
        self,
        accounts: AccountKeeper,
        epochs: EpochsKeeper,
        stake: StakeKeeper,
        slashing: SlashingKeeper,
        bls: BlsKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        self.accounts = accounts
        self.epochs = epochs
        self.stake = stake
        self.slashing = slashing
        self.bls = bls
        self.authority = authority
        self.work: InferenceKeeper | None = None
        self.standing: Standing | None = None

    def set_work_keeper(self, work: InferenceKeeper) -> None:
        """x/inference, built after this keeper (app.py): the work roots an epoch's summary carries."""
        self.work = work

    def set_standing(self, standing: Standing) -> None:
        """x/poc, built after this keeper (app.py): the hosts whose weight is withheld (INVALID)."""
        self.standing = standing

    def invalid(self, ctx: Context, host: bytes) -> bool:
        return self.standing is not None and self.standing.is_invalid(ctx, host)

    # --- params and records -------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> sprint_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return sprint_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: sprint_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def _get(self, ctx: Context, key: bytes, record: type[M]) -> M | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(key)
        return None if raw is None else record.FromString(raw)

    def _list(self, ctx: Context, prefix: bytes, record: type[M]) -> list[M]:
        return [record.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def race(self, ctx: Context, epoch: int) -> sprint_pb2.Race | None:
        return self._get(ctx, keys.race_key(epoch), sprint_pb2.Race)

    def races(self, ctx: Context) -> list[sprint_pb2.Race]:
        return self._list(ctx, keys.RACE_PREFIX, sprint_pb2.Race)

    def set_race(self, ctx: Context, race: sprint_pb2.Race) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.race_key(race.epoch), race.SerializeToString())

    def commitment(self, ctx: Context, epoch: int, host: bytes) -> sprint_pb2.Commitment | None:
        return self._get(ctx, keys.commitment_key(epoch, host), sprint_pb2.Commitment)

    def commitments(self, ctx: Context, epoch: int | None = None) -> list[sprint_pb2.Commitment]:
        """An epoch's commitments in host order (every kept one, epoch order, with None)."""
        prefix = keys.COMMITMENT_PREFIX if epoch is None else keys.commitments_prefix(epoch)
        return self._list(ctx, prefix, sprint_pb2.Commitment)

    def set_commitment(self, ctx: Context, commitment: sprint_pb2.Commitment) -> None:
        key = keys.commitment_key(commitment.epoch, bech32.decode(commitment.host))
        ctx.kv(keys.STORE_PREFIX).set(key, commitment.SerializeToString())

    def validations(self, ctx: Context, epoch: int | None = None, host: bytes = b"") -> list[sprint_pb2.Validation]:
        """An epoch's validations in (host, validator) order, or one host's (every kept one, with None)."""
        prefix = keys.VALIDATION_PREFIX if epoch is None else keys.validations_prefix(epoch, host)
        return self._list(ctx, prefix, sprint_pb2.Validation)

    def set_validation(self, ctx: Context, validation: sprint_pb2.Validation) -> None:
        key = keys.validation_key(validation.epoch, bech32.decode(validation.host), bech32.decode(validation.validator))
        ctx.kv(keys.STORE_PREFIX).set(key, validation.SerializeToString())

    def result(self, ctx: Context, epoch: int) -> sprint_pb2.EpochResult | None:
        return self._get(ctx, keys.result_key(epoch), sprint_pb2.EpochResult)

    def results(self, ctx: Context) -> list[sprint_pb2.EpochResult]:
        return self._list(ctx, keys.RESULT_PREFIX, sprint_pb2.EpochResult)

    def set_result(self, ctx: Context, result: sprint_pb2.EpochResult) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.result_key(result.epoch), result.SerializeToString())

    # --- the stages' randomness ---------------------------------------------------------------------

    def beacon(self, ctx: Context) -> bytes:
        """The BLS beacon of the latest certified height; on a chain without certificates, a hash of the last
        app hash (README, "Randomness")."""
        beacon = self.bls.beacon(ctx)
        if beacon is not None:
            return beacon
        last = self.bls.last_commitment(ctx)
        return types.fallback_beacon(ctx.header.chain_id, ctx.header.height, last[1] if last else b"")

    def fix_seed(self, ctx: Context, epoch: int) -> None:
        seed = types.epoch_seed(epoch, self.beacon(ctx))
        self.set_race(ctx, sprint_pb2.Race(epoch=epoch, seed=seed, seed_height=ctx.header.height))
        ctx.emit("sprint_seed", epoch=str(epoch), seed=seed.hex())

    def fix_randomness(self, ctx: Context, epoch: int) -> None:
        race = self.race(ctx, epoch) or sprint_pb2.Race(epoch=epoch)
        race.randomness = types.epoch_randomness(epoch, self.beacon(ctx))
        race.randomness_height = ctx.header.height
        self.set_race(ctx, race)
        ctx.emit("sprint_randomness", epoch=str(epoch), randomness=race.randomness.hex())

    # --- messages -----------------------------------------------------------------------------------

    def require_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        """Refuse unless the block is in ``stage`` of ``epoch``, the current epoch."""
        current = self.epochs.current_epoch(ctx).number
        if epoch != current:
            raise ErrWrongEpoch.wrap(f"epoch {epoch} is not the current epoch {current}")
        now = self.epochs.current_stage(ctx)
        if now != stage:
            raise ErrWrongStage.wrap(f"epoch {epoch} is in {STAGE_NAME(now)}, not {STAGE_NAME(stage)}")

    def commit(self, ctx: Context, host: bytes, epoch: int, root: bytes, count: int, params_hash: bytes) -> None:
        """Record a host's commitment (root and count already checked statelessly); a later one in the same
        stage replaces it, with a count at least as large."""
        self.require_stage(ctx, epoch, epochs_pb2.STAGE_RACE)
        if self.stake.get_host(ctx, host) is None:
            raise ErrNotHost.wrap(f"{bech32.encode(host)} is not a registered host")
        expected = self.get_params(ctx).race_params_hash
        if params_hash != expected:
            raise ErrParamsHash.wrap(f"params hash {params_hash.hex()} is not the chain's {expected.hex()}")
        earlier = self.commitment(ctx, epoch, host)
        if earlier is not None and count < earlier.count:
            raise ErrCountShrinks.wrap(f"count {count} is below the committed {earlier.count}")
        pubkey = self.accounts.get_pubkey(ctx, host)
        if pubkey is None:
            raise ErrNoPubkey.wrap(bech32.encode(host))
        record = sprint_pb2.Commitment(
            host=bech32.encode(host), epoch=epoch, root=root, count=count, pubkey=pubkey, height=ctx.header.height
        )
        self.set_commitment(ctx, record)
        ctx.emit("sprint_commit", host=record.host, epoch=str(epoch), root=root.hex(), count=str(count))

    def validate(self, ctx: Context, validator: bytes, epoch: int, host: bytes, samples: int, failures: int) -> bool:
        """Record a validator's verdict on a host (failures ≤ samples already checked); returns the chain's
        verdict: fraud when the failures reach the threshold for the samples."""
        self.require_stage(ctx, epoch, epochs_pb2.STAGE_RACE_VALIDATION)
        if validator == host:
            raise ErrSelfValidation.wrap(bech32.encode(host))
        power = self.stake.validator_power(ctx, validator)
        if power == 0:
            raise ErrNotValidator.wrap(f"{bech32.encode(validator)} holds no power in the validator set")
        commitment = self.commitment(ctx, epoch, host)
        if commitment is None:
            raise ErrNoCommitment.wrap(f"{bech32.encode(host)} in epoch {epoch}")
        if ctx.kv(keys.STORE_PREFIX).get(keys.validation_key(epoch, host, validator)) is not None:
            raise ErrDuplicateValidation.wrap(f"{bech32.encode(validator)} on {bech32.encode(host)}")
        params = self.get_params(ctx)
        if samples != params.samples:
            raise ErrBadSamples.wrap(f"samples {samples}, the params ask {params.samples}")
        fraud = is_fraud(samples, failures, honest_mismatch(params), false_flag(params))
        record = sprint_pb2.Validation(
            validator=bech32.encode(validator),
            host=bech32.encode(host),
            epoch=epoch,
            samples=samples,
            failures=failures,
            fraud=fraud,
            power=power,
        )
        self.set_validation(ctx, record)
        if fraud:
            commitment.fraud_power += power
        else:
            commitment.valid_power += power
        self.set_commitment(ctx, commitment)
        ctx.emit(
            "sprint_validation",
            validator=record.validator,
            host=record.host,
            epoch=str(epoch),
            failures=str(failures),
            fraud=str(fraud).lower(),
        )
        return fraud

    # --- the decision ---------------------------------------------------------------------------------

    def decide(self, ctx: Context, epoch: int) -> sprint_pb2.EpochResult | None:
        """Judge every committed host, hand the weights to x/stake (the previous epoch's unless the confirmed hosts
        hold more than 2/3 of the set in force's power), then slash and jail fraud; the result is kept. None
        before the race first ran on this chain (no host has ever committed): x/stake's collateral stands in."""
        commitments = self.commitments(ctx, epoch)
        if not commitments and self.last_decided(ctx) is None:
            ctx.emit("sprint_no_race", epoch=str(epoch))  # collateral stands in (README, "Before the first race")
            return None
        params = self.get_params(ctx)
        powers = self.stake.validator_powers(ctx)
        total = sum(powers.values())
        results = [judge(c, powers, total, params.weight_scale) for c in commitments]
        for result in results:
            if result.weight and self.invalid(ctx, bech32.decode(result.host)):
                result.weight = 0  # found cheating at inference (x/poc): no weight, whatever it raced
                ctx.emit("sprint_weight_withheld", epoch=str(epoch), host=result.host)
        weights = {bech32.decode(r.host): r.weight for r in results if r.weight}
        staying = sum(powers.get(host, 0) for host in weights)
        carried = 3 * staying <= 2 * total
        if carried:  # too little of the set in force confirmed to hand it over (README, "Safety")
            weights = {h: w for h, w in self.previous_weights(ctx).items() if not self.invalid(ctx, h)}
            ctx.emit(
                "sprint_carry_over", epoch=str(epoch), hosts=str(len(weights)), confirmed_power=f"{staying}/{total}"
            )
        self.stake.set_epoch_weights(ctx, epoch, weights)
        for result, commitment in zip(results, commitments):
            if result.outcome == sprint_pb2.OUTCOME_FRAUD:
                result.slashed = str(self.punish(ctx, commitment, params))
        outcome = sprint_pb2.EpochResult(
            epoch=epoch,
            hosts=results,
            total_weight=sum(weights.values()),
            carried_over=carried,
            height=ctx.header.height,
        )
        self.set_result(ctx, outcome)
        self.set_last_decided(ctx, epoch)
        ctx.emit("sprint_weights", epoch=str(epoch), hosts=str(len(weights)), total_weight=str(outcome.total_weight))
        return outcome

    def last_decided(self, ctx: Context) -> int | None:
        """The last epoch the race decided (None: it never has, on this chain)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.LAST_DECIDED_KEY)
        return None if raw is None else int.from_bytes(raw, "big")

    def set_last_decided(self, ctx: Context, epoch: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.LAST_DECIDED_KEY, keys.u64(epoch))

    def previous_weights(self, ctx: Context) -> dict[bytes, int]:
        """The weights recorded last (the previous epoch's; genesis records epoch 0's)."""
        previous = self.stake.weights_epoch(ctx)
        return {} if previous is None else self.stake.epoch_weights(ctx, previous)

    def punish(self, ctx: Context, commitment: sprint_pb2.Commitment, params: sprint_pb2.Params) -> int:
        """Slash ``fraud_slash_fraction`` of the host's collateral, paid to the validators that found the fraud
        (pro rata to their power when they validated; the rest to the community pool), and jail it."""
        host = bech32.decode(commitment.host)
        finders = fraud_finders(self.validations(ctx, commitment.epoch, host))
        taken = self.slashing.slash(
            ctx, host, fraud_slash_fraction(params), "sprint_fraud", finders, infraction_height=commitment.height
        )
        self.stake.jail(ctx, host)
        return taken

    def prune(self, ctx: Context, epoch: int) -> None:
        """Drop the races, commitments and validations of epochs before ``epoch - 1``; results stay."""
        if epoch < 2:
            return
        store = ctx.kv(keys.STORE_PREFIX)
        for prefix in (keys.RACE_PREFIX, keys.COMMITMENT_PREFIX, keys.VALIDATION_PREFIX):
            for key, _ in list(store.iterate(prefix, end=prefix + keys.u64(epoch - 1))):
                store.delete(key)

    # --- the epoch's proof (README, "The epoch's proof") ------------------------------------------

    def summary(self, ctx: Context, epoch: int) -> sprint_pb2.EpochSummary | None:
        return self._get(ctx, keys.summary_key(epoch), sprint_pb2.EpochSummary)

    def summaries(self, ctx: Context) -> list[sprint_pb2.EpochSummary]:
        return self._list(ctx, keys.SUMMARY_PREFIX, sprint_pb2.EpochSummary)

    def set_summary(self, ctx: Context, summary: sprint_pb2.EpochSummary) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        store.set(keys.summary_key(summary.epoch), summary.SerializeToString())
        latest = store.get(keys.LATEST_SUMMARY_KEY)
        if latest is None or int.from_bytes(latest[:8], "big") <= summary.height:
            store.set(keys.LATEST_SUMMARY_KEY, summary.height.to_bytes(8, "big") + types.summary_digest(summary))

    def write_summary(self, ctx: Context, epoch: int) -> sprint_pb2.EpochSummary:
        """``epoch``'s summary, in the first block of the next (x/inference's epoch end has made its work roots
        final): each host with weight (x/stake's weights of the epoch) or work, in host order."""
        weights = self.stake.epoch_weights(ctx, epoch)
        works = {bech32.decode(w.host): w for w in self.work.epoch_works_of(ctx, epoch)} if self.work else {}
        lines, hosts = [], []
        for host in sorted(weights.keys() | works.keys()):
            work = works.get(host)
            line = sprint_pb2.HostSummary(
                host=bech32.encode(host),
                weight=weights.get(host, 0),
                work_root=work.root if work else b"",
                inferences=work.count if work else 0,
                tokens=work.units if work else 0,
            )
            hosts.append(line)
            lines.append(types.host_line(host, line.weight, line.work_root, line.inferences, line.tokens))
        summary = sprint_pb2.EpochSummary(
            epoch=epoch,
            hosts=hosts,
            host_count=len(hosts),
            hosts_root=merkle.root(lines),
            total_weight=sum(h.weight for h in hosts),
            total_inferences=sum(h.inferences for h in hosts),
            total_tokens=sum(h.tokens for h in hosts),
            height=ctx.header.height,
        )
        self.set_summary(ctx, summary)
        ctx.emit("epoch_summary", epoch=str(epoch), hosts=str(len(hosts)), hash=types.summary_digest(summary).hex())
        return summary

    def signed_extra(self, ctx: Context, height: int) -> bytes:
        """x/bls asks, in block ``height - 1``'s end, what the votes of ``height`` sign: the hash of the summary
        that block wrote, if it wrote one."""
        latest = ctx.kv(keys.STORE_PREFIX).get(keys.LATEST_SUMMARY_KEY)
        if latest is None or int.from_bytes(latest[:8], "big") != height - 1:
            return b""
        return latest[8:]

    # --- epoch hooks --------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        """The previous epoch's summary (every module's epoch end has run: its work roots are final), then the
        pruning."""
        self.write_summary(ctx, epoch - 1)
        self.prune(ctx, epoch)

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        stages: dict[int, Callable[[Context, int], object]] = {
            epochs_pb2.STAGE_RACE: self.fix_seed,
            epochs_pb2.STAGE_RACE_VALIDATION: self.fix_randomness,
            epochs_pb2.STAGE_SET_VALIDATORS: self.decide,
        }
        if stage in stages:
            stages[stage](ctx, epoch)
