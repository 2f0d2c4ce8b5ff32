"""Hosts, their collateral, the epoch's weights and the validator set CometBFT runs with.

A host registers (MsgCreateValidator, at genesis by gentx), deposits and withdraws collateral; withdrawn
collateral unbonds for ``unbonding_epochs`` epochs, slashable, and is paid at an epoch's start. Each epoch
has weights (``set_epoch_weights``: the Sprint race's, x/sprint; collateral's in an epoch no host raced in);
at the epoch's set-validators stage they become the validator set (``power.py``). Jailing removes a host at
once.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import keys_pb2 as tm_keys

from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.stake.v1 import stake_pb2
from sdk.address import consensus_address, module_address
from sdk.coins import Coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.dec import PRECISION, mul_floor
from sdk.params import GOV_AUTHORITY
from x.stake import keys, power
from x.stake.errors import ErrConsensusKeyUsed, ErrHostExists, ErrInsufficientCollateral, ErrNoHost
from x.stake.expected_keepers import AccountKeeper, BankKeeper, EpochsKeeper
from x.stake.params import default_params, free_weight_share, max_power_share


def _u64(value: bytes) -> int:
    return int.from_bytes(value, "big")


class StakeKeeper:
    """Owns the ``stake/`` prefix; bonded collateral sits in ``bonded_tokens_pool``, unbonding collateral in
    ``not_bonded_tokens_pool``."""

    def __init__(
        self, accounts: AccountKeeper, bank: BankKeeper, epochs: EpochsKeeper, authority: bytes = GOV_AUTHORITY
    ) -> None:
        """``authority``: who may change the params (``MsgUpdateParams``)."""
        self.accounts = accounts
        self.bank = bank
        self.epochs = epochs
        self.authority = authority
        self.power_table_written = False
        """Set whenever this block wrote the power table, so end block diffs it only then (with many hosts the
        diff reads every one). Only a wasted diff can come of a stale True; every writer sets it."""

    # --- params -------------------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> stake_pb2.Params:
        """The stored params; the defaults for a state that has none."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return stake_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: stake_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def bond_denom(self, ctx: Context) -> str:
        return self.get_params(ctx).bond_denom

    # --- hosts --------------------------------------------------------------------------------------

    def get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.host_key(operator))
        return stake_pb2.Host.FromString(raw) if raw else None

    def must_get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host:
        host = self.get_host(ctx, operator)
        if host is None:
            raise ErrNoHost.wrap(f"{bech32.encode(operator)} is not a registered host")
        return host

    def hosts(self, ctx: Context) -> list[stake_pb2.Host]:
        """Every host in operator-address order (deterministic)."""
        return [stake_pb2.Host.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.HOST_PREFIX)]

    def set_host(self, ctx: Context, host: stake_pb2.Host) -> None:
        """Store a host and index it by its consensus address (at registration, and at genesis import)."""
        operator = bech32.decode(host.operator)
        store = ctx.kv(keys.STORE_PREFIX)
        store.set(keys.host_key(operator), host.SerializeToString())
        store.set(keys.consensus_index_key(consensus_address(host.consensus_pubkey)), operator)

    def host_by_consensus_address(self, ctx: Context, consensus_addr: bytes) -> bytes | None:
        """The operator of the host CometBFT knows by ``consensus_addr`` (None: no such host)."""
        return ctx.kv(keys.STORE_PREFIX).get(keys.consensus_index_key(consensus_addr))

    def register_host(
        self, ctx: Context, operator: bytes, pubkey: bytes, description: staking_pb2.Description, collateral: int
    ) -> stake_pb2.Host:
        """A new host with ``collateral`` bonded from its operator; it joins the validator set at the next
        set-validators stage (at genesis, at once)."""
        store = ctx.kv(keys.STORE_PREFIX)
        if store.get(keys.host_key(operator)) is not None:
            raise ErrHostExists.wrap(f"{bech32.encode(operator)} is already a host")
        if store.get(keys.consensus_index_key(consensus_address(pubkey))) is not None:
            raise ErrConsensusKeyUsed.wrap("another host signs with this consensus key")
        host = stake_pb2.Host(
            operator=bech32.encode(operator), consensus_pubkey=pubkey, description=description, collateral="0"
        )
        self.set_host(ctx, host)
        self.deposit_collateral(ctx, operator, collateral)
        ctx.emit(
            "create_validator",
            validator=bech32.encode(operator, bech32.VALOPER_PREFIX),
            amount=f"{collateral}{self.bond_denom(ctx)}",
        )
        return self.must_get_host(ctx, operator)

    # --- collateral ---------------------------------------------------------------------------------

    def pool(self, ctx: Context, name: str) -> bytes:
        """A collateral pool's address, its module account created on first use (coins go in)."""
        return self.accounts.ensure_module_account(ctx, name)

    def pool_balance(self, ctx: Context, name: str) -> int:
        """What a pool holds; reads only (invariants and queries must not create its account)."""
        return self.bank.get_balance(ctx, module_address(name), self.bond_denom(ctx))

    def deposit_collateral(self, ctx: Context, operator: bytes, amount: int) -> None:
        host = self.must_get_host(ctx, operator)
        denom = self.bond_denom(ctx)
        self.bank.delegate_coins(ctx, operator, self.pool(ctx, keys.BONDED_POOL), Coins(((denom, amount),)))
        host.collateral = str(int(host.collateral) + amount)
        self.set_host(ctx, host)
        ctx.emit("deposit_collateral", operator=host.operator, amount=f"{amount}{denom}")

    def withdraw_collateral(self, ctx: Context, operator: bytes, amount: int) -> int:
        """Move ``amount`` of bonded collateral into unbonding; returns the epoch at whose start it is paid."""
        host = self.must_get_host(ctx, operator)
        bonded = int(host.collateral)
        denom = self.bond_denom(ctx)
        if amount > bonded:
            raise ErrInsufficientCollateral.wrap(
                f"{host.operator} has {bonded}{denom} bonded, cannot withdraw {amount}{denom}"
            )
        host.collateral = str(bonded - amount)
        self.set_host(ctx, host)
        self.bank.send_coins(
            ctx, self.pool(ctx, keys.BONDED_POOL), self.pool(ctx, keys.UNBONDING_POOL), Coins(((denom, amount),))
        )
        completion = self.epochs.current_epoch(ctx).number + self.get_params(ctx).unbonding_epochs
        key = keys.unbonding_key(completion, operator, ctx.header.height)
        store = ctx.kv(keys.STORE_PREFIX)
        raw = store.get(key)
        entry = (
            stake_pb2.UnbondingEntry.FromString(raw)
            if raw
            else stake_pb2.UnbondingEntry(
                operator=host.operator,
                amount="0",
                initial_amount="0",
                creation_height=ctx.header.height,
                completion_epoch=completion,
            )
        )
        entry.amount = str(int(entry.amount) + amount)
        entry.initial_amount = str(int(entry.initial_amount) + amount)
        store.set(key, entry.SerializeToString())
        ctx.emit(
            "withdraw_collateral", operator=host.operator, amount=f"{amount}{denom}", completion_epoch=str(completion)
        )
        return completion

    def unbonding_entries(self, ctx: Context, operator: bytes | None = None) -> list[stake_pb2.UnbondingEntry]:
        """Unbonding collateral in completion order (then operator), of one operator or all."""
        entries = [
            stake_pb2.UnbondingEntry.FromString(v)
            for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.UNBONDING_PREFIX)
            if operator is None or keys.unbonding_operator(k) == operator
        ]
        return entries

    def complete_unbonding(self, ctx: Context, epoch: int) -> None:
        """Pay every entry due by ``epoch`` to its operator (what slashes left of it)."""
        store = ctx.kv(keys.STORE_PREFIX)
        end = keys.UNBONDING_PREFIX + (epoch + 1).to_bytes(8, "big")
        due = list(store.iterate(keys.UNBONDING_PREFIX, end=end))
        denom = self.bond_denom(ctx)
        for key, raw in due:
            entry = stake_pb2.UnbondingEntry.FromString(raw)
            store.delete(key)
            if int(entry.amount):
                self.bank.undelegate_coins(
                    ctx,
                    self.pool(ctx, keys.UNBONDING_POOL),
                    bech32.decode(entry.operator),
                    Coins(((denom, int(entry.amount)),)),
                )
            ctx.emit("complete_unbonding", operator=entry.operator, amount=f"{entry.amount}{denom}")

    # --- weights and the validator set --------------------------------------------------------------

    def set_epoch_weights(self, ctx: Context, epoch: int, weights: Mapping[bytes, int]) -> None:
        """The epoch's weights (operator -> weight), replacing any recorded before; the Sprint race calls this.
        Only the latest epoch's weights are kept."""
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.WEIGHT_PREFIX)):
            store.delete(key)
        for operator in sorted(weights):
            if weights[operator] > 0:
                store.set(keys.weight_key(epoch, operator), weights[operator].to_bytes(8, "big"))

    def weights_epoch(self, ctx: Context) -> int | None:
        """The epoch the recorded weights are for (None: none recorded)."""
        first = next(ctx.kv(keys.STORE_PREFIX).iterate(keys.WEIGHT_PREFIX), None)
        return None if first is None else _u64(first[0][1:9])

    def epoch_weights(self, ctx: Context, epoch: int) -> dict[bytes, int]:
        n = len(keys.weights_prefix(epoch))
        return {k[n:]: _u64(v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.weights_prefix(epoch))}

    def collateral_weights(self, ctx: Context) -> dict[bytes, int]:
        """The weights of an epoch no host raced in (the genesis epoch's): each host's bonded collateral in units
        of ``power_reduction``."""
        reduction = self.get_params(ctx).power_reduction
        return {bech32.decode(h.operator): int(h.collateral) // reduction for h in self.hosts(ctx)}

    def validator_powers(self, ctx: Context) -> dict[bytes, int]:
        """The validator set in force (the power table): operator -> power, operator order."""
        n = len(keys.POWER_PREFIX)
        return {k[n:]: _u64(v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.POWER_PREFIX)}

    def validator_power(self, ctx: Context, operator: bytes) -> int:
        """One host's power in the table in force (0: not in the set)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.power_key(operator))
        return 0 if raw is None else _u64(raw)

    def set_validator_powers(self, ctx: Context, powers: Mapping[bytes, int]) -> None:
        self.power_table_written = True
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.POWER_PREFIX)):
            store.delete(key)
        for operator in sorted(powers):
            store.set(keys.power_key(operator), powers[operator].to_bytes(8, "big"))

    def update_validator_set(self, ctx: Context, epoch: int) -> dict[bytes, int]:
        """The power table from ``epoch``'s weights (x/sprint records them before this runs; in an epoch no host
        raced in, collateral stands in, recorded first): unjailed hosts only, backed, selected and capped
        (power.py). A table that would be empty is not written: the set in force stays, and
        ``set_validators_kept`` says so (CometBFT must never get an empty set)."""
        if self.weights_epoch(ctx) != epoch:
            self.set_epoch_weights(ctx, epoch, self.collateral_weights(ctx))
        params = self.get_params(ctx)
        hosts = {bech32.decode(h.operator): h for h in self.hosts(ctx)}
        weights = self.epoch_weights(ctx, epoch)
        powers = power.validator_powers(
            {op: w for op, w in weights.items() if op in hosts and not hosts[op].jailed},
            {op: int(h.collateral) for op, h in hosts.items()},
            free_weight_share(params),
            params.collateral_per_weight,
            params.max_validators,
            max_power_share(params),
        )
        if not powers and self.validator_powers(ctx):
            ctx.emit("set_validators_kept", epoch=str(epoch))
            return self.validator_powers(ctx)
        self.set_validator_powers(ctx, powers)
        ctx.emit("set_validators", epoch=str(epoch), validators=str(len(powers)), total_power=str(sum(powers.values())))
        return powers

    def last_sent_powers(self, ctx: Context) -> dict[bytes, int]:
        """The validator set as last sent to CometBFT: consensus key -> power."""
        n = len(keys.LAST_POWER_PREFIX)
        return {k[n:]: _u64(v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.LAST_POWER_PREFIX)}

    def consensus_powers(self, ctx: Context) -> dict[bytes, int]:
        """The power table by consensus key: what CometBFT should have."""
        powers = self.validator_powers(ctx)
        return {self.must_get_host(ctx, op).consensus_pubkey: p for op, p in powers.items()}

    def apply_validator_set_updates(self, ctx: Context) -> list[abci.ValidatorUpdate]:
        """The power table's changes since it was last sent to CometBFT, recorded as sent: at most one update
        per validator (its new power, 0 to remove it), sorted by consensus key."""
        current, last = self.consensus_powers(ctx), self.last_sent_powers(ctx)
        store = ctx.kv(keys.STORE_PREFIX)
        updates = []
        for pubkey in sorted(current.keys() | last.keys()):
            new = current.get(pubkey, 0)
            if new == last.get(pubkey, 0):
                continue
            updates.append(abci.ValidatorUpdate(pub_key=tm_keys.PublicKey(ed25519=pubkey), power=new))
            if new:
                store.set(keys.last_power_key(pubkey), new.to_bytes(8, "big"))
            else:
                store.delete(keys.last_power_key(pubkey))
        return updates

    def genesis_validator_set(self, ctx: Context) -> list[abci.ValidatorUpdate]:
        """InitChain's validator set, after the gentxs: a new chain's power table comes from epoch 0's
        weights (collateral's stand-in); an exported chain's was imported whole."""
        if not self.validator_powers(ctx):
            self.update_validator_set(ctx, 0)
        return self.apply_validator_set_updates(ctx)

    # --- jailing and slashing -----------------------------------------------------------------------

    def jail(self, ctx: Context, operator: bytes) -> None:
        """Out of the validator set at once (end block sends its removal); back only after unjailing, at a
        set-validators stage."""
        host = self.must_get_host(ctx, operator)
        host.jailed = True
        self.set_host(ctx, host)
        self.power_table_written = True
        ctx.kv(keys.STORE_PREFIX).delete(keys.power_key(operator))
        ctx.emit("jail", operator=host.operator)

    def unjail(self, ctx: Context, operator: bytes) -> None:
        host = self.must_get_host(ctx, operator)
        host.jailed = False
        self.set_host(ctx, host)
        ctx.emit("unjail", operator=host.operator)

    def slash_collateral(
        self, ctx: Context, operator: bytes, fraction: Fraction, destination: bytes, infraction_height: int = 0
    ) -> int:
        """Take ``fraction`` (rounded down) of the host's bonded collateral, of each of its unbonding entries
        created at or after ``infraction_height`` (collateral withdrawn before the offence was not at stake
        in it), and of its weight for the current epoch; the coins go to ``destination``. Returns the
        amount taken."""
        host = self.must_get_host(ctx, operator)
        denom = self.bond_denom(ctx)
        cut = mul_floor(int(host.collateral), fraction)
        host.collateral = str(int(host.collateral) - cut)
        self.set_host(ctx, host)
        if cut:
            self.bank.send_coins(ctx, self.pool(ctx, keys.BONDED_POOL), destination, Coins(((denom, cut),)))
        store = ctx.kv(keys.STORE_PREFIX)
        for key, raw in list(store.iterate(keys.UNBONDING_PREFIX)):
            if keys.unbonding_operator(key) != operator:
                continue
            entry = stake_pb2.UnbondingEntry.FromString(raw)
            if entry.creation_height < infraction_height:
                continue
            entry_cut = mul_floor(int(entry.amount), fraction)
            if entry_cut:
                entry.amount = str(int(entry.amount) - entry_cut)
                store.set(key, entry.SerializeToString())
                self.bank.send_coins(
                    ctx, self.pool(ctx, keys.UNBONDING_POOL), destination, Coins(((denom, entry_cut),))
                )
                cut += entry_cut
        epoch = self.weights_epoch(ctx)
        if epoch is not None:
            weight = self.epoch_weights(ctx, epoch).get(operator, 0)
            if weight:
                store.set(keys.weight_key(epoch, operator), (weight - mul_floor(weight, fraction)).to_bytes(8, "big"))
        return cut

    # --- epoch hooks --------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        return None

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        """At the set-validators stage the epoch's weights become the validator set, and only then is the
        collateral due by this epoch paid: until the new set is in force, the old one's power stays backed
        by collateral that can still be slashed."""
        if stage == epochs_pb2.STAGE_SET_VALIDATORS:
            self.update_validator_set(ctx, epoch)
            self.complete_unbonding(ctx, epoch)

    # --- the Cosmos shape ---------------------------------------------------------------------------

    def cosmos_validator(self, ctx: Context, host: stake_pb2.Host) -> staking_pb2.Validator:
        """A host as ``cosmos.staking.v1beta1.Validator``: bonded while in the validator set, tokens its
        collateral, and as many shares (a LegacyDec: on the wire the value × 10^18, as the SDK sends it)."""
        operator = bech32.decode(host.operator)
        in_set = ctx.kv(keys.STORE_PREFIX).get(keys.power_key(operator)) is not None
        validator = staking_pb2.Validator(
            operator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
            jailed=host.jailed,
            status=staking_pb2.BOND_STATUS_BONDED if in_set else staking_pb2.BOND_STATUS_UNBONDED,
            tokens=host.collateral,
            delegator_shares=str(int(host.collateral or 0) * 10**PRECISION),
            description=host.description,
            min_self_delegation="1",
        )
        validator.consensus_pubkey.Pack(ed25519.PubKey(key=host.consensus_pubkey), type_url_prefix="/")
        return validator
