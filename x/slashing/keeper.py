"""Slashing: what CometBFT reports of validators (double signs, missed blocks) turned into slashes and
jail, and the ``slash`` other modules (PoC disputes) call.

Written as the rules read (x/slashing README): ``handle_evidence`` for each misbehaviour in a block,
``handle_signature`` for each vote of its last commit, ``slash`` for the coins, ``unjail`` for the way back.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from cosmpy.protos.cosmos.slashing.v1beta1 import slashing_pb2

from protogen.gonka.slashing.v1 import slashing_pb2 as gonka_slashing
from sdk.abci.blocks import BlockInfo, Misbehavior
from sdk.address import consensus_address
from sdk.baseapp import stored_consensus_params
from sdk.coins import Coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.dec import mul_floor
from sdk.params import GOV_AUTHORITY
from x.slashing import keys
from x.slashing.errors import (
    ErrNoValidatorForAddress,
    ErrSelfDelegationTooLowToUnjail,
    ErrValidatorJailed,
    ErrValidatorNotJailed,
)
from x.slashing.expected_keepers import AccountKeeper, BankKeeper, PoolKeeper, StakeKeeper
from x.slashing.params import default_params, fraction

NS = 1_000_000_000
DOWNTIME_LOOKBACK = 3
"""A downtime's infraction height is this many blocks back (the Cosmos SDK's: the validator-update delay of
two blocks, plus the commit being judged)."""


class SlashingKeeper:
    """Owns the ``slashing/`` prefix: each validator's signing record, and the params."""

    def __init__(
        self,
        stake: StakeKeeper,
        bank: BankKeeper,
        accounts: AccountKeeper,
        pool: PoolKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        """``pool``: the community pool, which receives what a slash pays no beneficiary."""
        self.stake = stake
        self.bank = bank
        self.accounts = accounts
        self.authority = authority
        self.pool = pool

    def get_params(self, ctx: Context) -> gonka_slashing.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return gonka_slashing.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: gonka_slashing.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    # --- signing records ----------------------------------------------------------------------------

    def signing_info(self, ctx: Context, consensus_addr: bytes) -> slashing_pb2.ValidatorSigningInfo | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.signing_info_key(consensus_addr))
        return slashing_pb2.ValidatorSigningInfo.FromString(raw) if raw else None

    def set_signing_info(self, ctx: Context, consensus_addr: bytes, info: slashing_pb2.ValidatorSigningInfo) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.signing_info_key(consensus_addr), info.SerializeToString())

    def signing_infos(self, ctx: Context) -> list[tuple[bytes, slashing_pb2.ValidatorSigningInfo]]:
        n = len(keys.SIGNING_INFO_PREFIX)
        return [
            (k[n:], slashing_pb2.ValidatorSigningInfo.FromString(v))
            for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.SIGNING_INFO_PREFIX)
        ]

    def missed_indices(self, ctx: Context, consensus_addr: bytes) -> list[int]:
        prefix = keys.missed_prefix(consensus_addr)
        return [int.from_bytes(k[len(prefix) :], "big") for k, _ in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def set_missed(self, ctx: Context, consensus_addr: bytes, index: int, missed: bool) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        if missed:
            store.set(keys.missed_key(consensus_addr, index), b"\x01")
        else:
            store.delete(keys.missed_key(consensus_addr, index))

    def clear_missed(self, ctx: Context, consensus_addr: bytes) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.missed_prefix(consensus_addr))):
            store.delete(key)

    # --- the block ----------------------------------------------------------------------------------

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        """Evidence first (a double signer is tombstoned before its votes count), then the last commit."""
        for evidence in block.misbehavior:
            self.handle_evidence(ctx, evidence)
        for vote in block.decided_last_commit:
            self.handle_signature(ctx, vote.validator, vote.signed)

    def handle_evidence(self, ctx: Context, evidence: Misbehavior) -> None:
        """A double sign (duplicate vote or light-client attack) by a known host, not older than the
        evidence params allow and not already punished: slash ``slash_fraction_double_sign``, jail and
        tombstone it (it can never unjail)."""
        operator = self.stake.host_by_consensus_address(ctx, evidence.validator)
        if operator is None or self._too_old(ctx, evidence):
            return
        info = self._info_or_new(ctx, evidence.validator)
        if info.tombstoned:
            return
        self.slash(
            ctx,
            operator,
            fraction(self.get_params(ctx), "slash_fraction_double_sign"),
            f"double_sign:{evidence.kind}",
            (),
            infraction_height=evidence.height,
        )
        host = self.stake.get_host(ctx, operator)
        if host is not None and not host.jailed:
            self.stake.jail(ctx, operator)
        info.tombstoned = True
        info.jailed_until.FromNanoseconds(keys.TOMBSTONE_UNTIL_NS)
        self.set_signing_info(ctx, evidence.validator, info)

    def _too_old(self, ctx: Context, evidence: Misbehavior) -> bool:
        """As the Cosmos SDK: too old only when past both the block and the time limit of the evidence params."""
        params = stored_consensus_params(ctx.store)
        if params is None or not params.HasField("evidence"):
            return False
        age_blocks = ctx.header.height - evidence.height
        age_ns = ctx.header.time_ns - evidence.time_ns
        max_ns = params.evidence.max_age_duration.ToNanoseconds()
        return age_blocks > params.evidence.max_age_num_blocks and age_ns > max_ns

    def handle_signature(self, ctx: Context, consensus_addr: bytes, signed: bool) -> None:
        """Count one vote of the last commit in the validator's window; past its first window, more missed
        than ``(1 − min_signed_per_window) × window`` jails it for ``downtime_jail_seconds`` of block time and
        slashes ``slash_fraction_downtime``; the count starts over."""
        operator = self.stake.host_by_consensus_address(ctx, consensus_addr)
        if operator is None:
            return
        params = self.get_params(ctx)
        window = params.signed_blocks_window
        info = self._info_or_new(ctx, consensus_addr)
        index = info.index_offset % window
        info.index_offset += 1
        was_missed = ctx.kv(keys.STORE_PREFIX).get(keys.missed_key(consensus_addr, index)) is not None
        if was_missed != (not signed):
            self.set_missed(ctx, consensus_addr, index, not signed)
            info.missed_blocks_counter += 1 if not signed else -1
        max_missed = window - mul_floor(window, fraction(params, "min_signed_per_window"))
        host = self.stake.get_host(ctx, operator)
        if (
            ctx.header.height > info.start_height + window
            and info.missed_blocks_counter > max_missed
            and host is not None
            and not host.jailed
            and not info.tombstoned
        ):
            ctx.emit(
                "liveness",
                address=bech32.encode(consensus_addr, bech32.VALCONS_PREFIX),
                missed_blocks=str(info.missed_blocks_counter),
                height=str(ctx.header.height),
            )
            self.slash(
                ctx,
                operator,
                fraction(params, "slash_fraction_downtime"),
                "missing_signature",
                (),
                infraction_height=ctx.header.height - DOWNTIME_LOOKBACK,
            )
            self.stake.jail(ctx, operator)
            info.jailed_until.FromNanoseconds(ctx.header.time_ns + params.downtime_jail_seconds * NS)
            info.missed_blocks_counter = 0
            info.index_offset = 0
            self.clear_missed(ctx, consensus_addr)
        self.set_signing_info(ctx, consensus_addr, info)

    def _info_or_new(self, ctx: Context, consensus_addr: bytes) -> slashing_pb2.ValidatorSigningInfo:
        """The record, or a new one that starts counting at this block."""
        info = self.signing_info(ctx, consensus_addr)
        if info is None:
            info = slashing_pb2.ValidatorSigningInfo(
                address=bech32.encode(consensus_addr, bech32.VALCONS_PREFIX), start_height=ctx.header.height
            )
        return info

    # --- slash and unjail ---------------------------------------------------------------------------

    def slash(
        self,
        ctx: Context,
        operator: bytes,
        share: Fraction,
        reason: str,
        beneficiaries: Sequence[tuple[bytes, int]],
        infraction_height: int = 0,
    ) -> int:
        """Take ``share`` of the host's collateral (bonded, and unbonding entries created at or after
        ``infraction_height``; rounded down) and of its epoch weight. ``beneficiaries`` (address, weight)
        receive the coins pro rata (rounded down); the rest goes to the community pool (source ``slash``;
        ). Emits ``slash`` with the amount, the reason and what
        went to the pool. Returns the amount taken."""
        pool = self.accounts.ensure_module_account(ctx, keys.SLASHED_POOL)
        taken = self.stake.slash_collateral(ctx, operator, share, pool, infraction_height)
        denom = self.stake.get_params(ctx).bond_denom
        total_weight = sum(weight for _, weight in beneficiaries)
        paid = 0
        for address, weight in beneficiaries:
            amount = taken * weight // total_weight if total_weight else 0
            if amount:
                self.bank.send_coins(ctx, pool, address, Coins(((denom, amount),)))
                paid += amount
        rest = taken - paid
        if rest:
            self.pool.fund_from_module(ctx, keys.SLASHED_POOL, Coins(((denom, rest),)), "slash")
        ctx.emit(
            "slash", operator=bech32.encode(operator), amount=f"{taken}{denom}", reason=reason, pool=f"{rest}{denom}"
        )
        return taken

    def unjail(self, ctx: Context, operator: bytes) -> None:
        """A jailed host, not tombstoned, past its jail time and with at least one unit of weight's
        collateral, is unjailed; it rejoins the validator set at the next set-validators stage."""
        host = self.stake.get_host(ctx, operator)
        if host is None:
            raise ErrNoValidatorForAddress.wrap(f"{bech32.encode(operator, bech32.VALOPER_PREFIX)} is not a host")
        if not host.jailed:
            raise ErrValidatorNotJailed.wrap(f"{host.operator} is not jailed")
        info = self.signing_info(ctx, consensus_address(host.consensus_pubkey))
        if info is not None and info.tombstoned:
            raise ErrValidatorJailed.wrap(f"{host.operator} is tombstoned for double signing and cannot be unjailed")
        if info is not None and ctx.header.time_ns < info.jailed_until.ToNanoseconds():
            raise ErrValidatorJailed.wrap(
                f"{host.operator} is jailed until {info.jailed_until.ToJsonString()}, "
                f"{(info.jailed_until.ToNanoseconds() - ctx.header.time_ns) // NS + 1} s of block time from now"
            )
        reduction = self.stake.get_params(ctx).power_reduction
        if int(host.collateral) < reduction:
            raise ErrSelfDelegationTooLowToUnjail.wrap(
                f"{host.operator} has {host.collateral} of collateral, below one unit of weight ({reduction})"
            )
        self.stake.unjail(ctx, operator)
        if info is not None:  # counted afresh from here: votes seen while it was being dropped do not count
            address = consensus_address(host.consensus_pubkey)
            info.start_height, info.index_offset, info.missed_blocks_counter = ctx.header.height, 0, 0
            self.set_signing_info(ctx, address, info)
            self.clear_missed(ctx, address)
