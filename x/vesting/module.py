"""x/vesting wired as a module: genesis (schedules, genesis vesting accounts, delegation tracking, the last
block time), the block time kept at begin block, params, queries and invariants."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.vesting.v1beta1 import vesting_pb2 as cosmos_vesting
from google.protobuf import json_format

from protogen.gonka.vesting.v1 import genesis_pb2, query_pb2, tx_pb2, vesting_pb2
from sdk.address import parse_address
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.vesting import invariants, keys
from x.vesting.keeper import VestingKeeper, amounts, to_proto
from x.vesting.params import default_params, validate_params

QUERY = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


class VestingModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: VestingKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.vesting.v1.GenesisState`` (after bank's: the coins are balances there). Genesis vesting
        accounts come in the SDK's shapes and lock part of the account's bank balance by time; an exported
        chain's parts (stored as release rates and rate changes), totals and delegation tracking are taken
        whole and must add up (the invariants)."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        k.set_last_block_time(ctx, genesis.last_block_time_ns or ctx.header.time_ns)
        seen: set[bytes] = set()
        for continuous in genesis.continuous_vesting_accounts:
            timed = _timed(continuous.base_vesting_account, continuous.start_time, delayed=False)
            if continuous.start_time >= timed.end_time:
                raise ValueError(f"vesting genesis account {timed.address}: start_time must be before end_time")
            _once(seen, timed.address)
            k.set_timed(ctx, timed)
        for delayed in genesis.delayed_vesting_accounts:
            timed = _timed(delayed.base_vesting_account, 0, delayed=True)
            _once(seen, timed.address)
            k.set_timed(ctx, timed)
        accounts: set[bytes] = set()
        for account in genesis.accounts:
            address = _address(account.address)
            if address in accounts:
                raise ValueError(f"vesting genesis lists account {account.address} twice")
            accounts.add(address)
            for field in ("scheduled", "vested", "delegated_free", "delegated_vesting"):
                _coins(getattr(account, field), f"account {account.address} {field}")
            k.set_account(ctx, account)
        for part in genesis.parts:
            _address(part.address)
            _coins(part.amount, f"part of {part.address}")
        last = genesis.last_release_epoch
        if not last:  # an export before epochs released, or one without the field: the epoch before the next
            last = self._default_last_release(ctx, genesis.parts)
        k.import_parts(ctx, genesis.parts, last)
        for check in (invariants.scheduled_accounted, invariants.locked_held):
            error = check(k, ctx)
            if error:
                raise ValueError(f"vesting genesis: {error}")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        genesis = genesis_pb2.GenesisState(params=k.get_params(ctx), parts=k.all_parts(ctx),
                                           accounts=k.accounts(ctx), last_block_time_ns=k.last_block_time_ns(ctx),
                                           last_release_epoch=k.last_release_epoch(ctx))
        for timed in k.timed_accounts(ctx):
            base = cosmos_vesting.BaseVestingAccount(base_account=auth_pb2.BaseAccount(address=timed.address),
                                                     original_vesting=timed.original_vesting, end_time=timed.end_time)
            if timed.delayed:
                genesis.delayed_vesting_accounts.add(base_vesting_account=base)
            else:
                genesis.continuous_vesting_accounts.add(base_vesting_account=base, start_time=timed.start_time)
        return message_dict(genesis)

    def _default_last_release(self, ctx: Context, parts: Any) -> int:
        """L when genesis gives none: the epochs keeper's current epoch (its start released), or the epoch
        before the earliest part if that is earlier (a part a failed hook left behind)."""
        last = self.keeper.epochs.current_epoch(ctx).number
        for part in parts:
            last = min(last, max(part.release_epoch - 1, 0))
        return last

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        """Keep the block time: locks by time are computed at it, in this block and in queries after it."""
        self.keeper.set_last_block_time(ctx, block.time_ns)

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "scheduled-accounted": lambda ctx: invariants.scheduled_accounted(k, ctx),
            "locked-held": lambda ctx: invariants.locked_held(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params)}

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            QUERY + "Schedule": QueryRoute(query_pb2.QueryScheduleRequest, self.query_schedule),
            QUERY + "Locked": QueryRoute(query_pb2.QueryLockedRequest, self.query_locked, bounded=True),
        }

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_schedule(self, ctx: Context, req: query_pb2.QueryScheduleRequest) -> query_pb2.QueryScheduleResponse:
        """Every pending part in release order, the account's totals and its lock by time (empty if none)."""
        address = parse_address(req.address, "address")
        k = self.keeper
        reply = query_pb2.QueryScheduleResponse(parts=k.parts(ctx, address))
        reply.totals.CopyFrom(k.get_account(ctx, address) or vesting_pb2.VestingAccount(address=req.address))
        timed = k.get_timed(ctx, address)
        if timed is not None:
            reply.timed.CopyFrom(timed)
        return reply

    def query_locked(self, ctx: Context, req: query_pb2.QueryLockedRequest) -> query_pb2.QueryLockedResponse:
        """At the last committed block: what bank refuses to send, everything still vesting, and the
        delegation tracking between them."""
        address = parse_address(req.address, "address")
        k = self.keeper
        account = k.get_account(ctx, address) or vesting_pb2.VestingAccount()
        return query_pb2.QueryLockedResponse(
            locked=k.locked_coins(ctx, address).to_proto(), vesting=to_proto(k.vesting_coins(ctx, address)),
            delegated_vesting=account.delegated_vesting, delegated_free=account.delegated_free)


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
    return vesting_pb2.TimedVesting(address=address, original_vesting=to_proto(amounts(base.original_vesting)),
                                    start_time=start_time, end_time=base.end_time, delayed=delayed)
