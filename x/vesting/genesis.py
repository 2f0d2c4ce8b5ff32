"""x/vesting genesis: vesting accounts in the SDK's shapes, and an exported chain's parts, totals and tracking."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.vesting.v1beta1 import vesting_pb2 as cosmos_vesting
from google.protobuf import json_format

from protogen.gonka.vesting.v1 import genesis_pb2, vesting_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from x.vesting import invariants
from x.vesting.keeper import VestingKeeper, amounts, to_proto
from x.vesting.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: VestingKeeper, state: dict[str, Any]) -> None:
    """``gonka.vesting.v1.GenesisState`` (after bank's: the coins are balances there). Genesis vesting
    accounts come in the SDK's shapes and lock part of the account's bank balance by time; an exported
    chain's parts (stored as release rates and rate changes), totals and delegation tracking are taken
    whole and must add up (the invariants)."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    keeper.set_last_block_time(ctx, genesis.last_block_time_ns or ctx.header.time_ns)
    seen: set[bytes] = set()
    for continuous in genesis.continuous_vesting_accounts:
        timed = _timed(continuous.base_vesting_account, continuous.start_time, delayed=False)
        if continuous.start_time >= timed.end_time:
            raise ValueError(f"vesting genesis account {timed.address}: start_time must be before end_time")
        _once(seen, timed.address)
        keeper.set_timed(ctx, timed)
    for delayed in genesis.delayed_vesting_accounts:
        timed = _timed(delayed.base_vesting_account, 0, delayed=True)
        _once(seen, timed.address)
        keeper.set_timed(ctx, timed)
    accounts: set[bytes] = set()
    for account in genesis.accounts:
        address = _address(account.address)
        if address in accounts:
            raise ValueError(f"vesting genesis lists account {account.address} twice")
        accounts.add(address)
        for field in ("scheduled", "vested", "delegated_free", "delegated_vesting"):
            _coins(getattr(account, field), f"account {account.address} {field}")
        keeper.set_account(ctx, account)
    for part in genesis.parts:
        _address(part.address)
        _coins(part.amount, f"part of {part.address}")
    last = genesis.last_release_epoch
    if not last:  # an export before epochs released, or one without the field: the epoch before the next
        last = _default_last_release(ctx, keeper, genesis.parts)
    keeper.import_parts(ctx, genesis.parts, last)
    for check in (invariants.scheduled_accounted, invariants.locked_held):
        error = check(keeper, ctx)
        if error:
            raise ValueError(f"vesting genesis: {error}")


def export_genesis(ctx: Context, keeper: VestingKeeper) -> dict[str, Any]:
    genesis = genesis_pb2.GenesisState(
        params=keeper.get_params(ctx),
        parts=keeper.all_parts(ctx),
        accounts=keeper.accounts(ctx),
        last_block_time_ns=keeper.last_block_time_ns(ctx),
        last_release_epoch=keeper.last_release_epoch(ctx),
    )
    for timed in keeper.timed_accounts(ctx):
        base = cosmos_vesting.BaseVestingAccount(
            base_account=auth_pb2.BaseAccount(address=timed.address),
            original_vesting=timed.original_vesting,
            end_time=timed.end_time,
        )
        if timed.delayed:
            genesis.delayed_vesting_accounts.add(base_vesting_account=base)
        else:
            genesis.continuous_vesting_accounts.add(base_vesting_account=base, start_time=timed.start_time)
    return message_dict(genesis)


def _address(text: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ValueError(f"vesting genesis address {text!r}: {exc}") from None


def _coins(coins: Any, what: str) -> None:
    try:
        for coin in coins:
            if not amounts([coin]):
                raise ValueError(f"vesting genesis {what}: zero amount of {coin.denom}")
    except ABCIError as err:
        raise ValueError(f"vesting genesis {what}: {err.log}") from None


def _once(seen: set[bytes], address: str) -> None:
    raw = bech32.decode(address)
    if raw in seen:
        raise ValueError(f"vesting genesis lists vesting account {address} twice")
    seen.add(raw)


def _timed(base: cosmos_vesting.BaseVestingAccount, start_time: int, *, delayed: bool) -> vesting_pb2.TimedVesting:
    """A genesis vesting account's lock; its coins are its bank balance, its account number and keys auth's."""
    address = base.base_account.address
    _address(address)
    what = f"vesting genesis account {address}"
    if base.delegated_free or base.delegated_vesting:
        raise ValueError(f"{what}: delegated_free and delegated_vesting belong in the accounts list")
    _coins(base.original_vesting, f"account {address} original_vesting")
    if not amounts(base.original_vesting):
        raise ValueError(f"{what}: original_vesting is empty")
    if base.end_time <= 0:
        raise ValueError(f"{what}: end_time must be positive")
    return vesting_pb2.TimedVesting(
        address=address,
        original_vesting=to_proto(amounts(base.original_vesting)),
        start_time=start_time,
        end_time=base.end_time,
        delayed=delayed,
    )


def _default_last_release(ctx: Context, keeper: VestingKeeper, parts: Any) -> int:
    """L when genesis gives none: the epochs keeper's current epoch (its start released), or the epoch
    before the earliest part if that is earlier (a part a failed hook left behind)."""
    last = keeper.epochs.current_epoch(ctx).number
    for part in parts:
        last = min(last, max(part.release_epoch - 1, 0))
    return last
