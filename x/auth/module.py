"""x/auth wired as a module: genesis accounts, module accounts, account queries."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, genesis_pb2, query_pb2, tx_pb2
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message

from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrInvalidRequest, ErrNotFound
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.pagination import paginate
from sdk.params import update_params_route
from x.auth import keys
from x.auth.keeper import AccountKeeper

QUERY = "/cosmos.auth.v1beta1.Query/"


def validate_params(params: auth_pb2.Params) -> None:
    """Gas prices of zero would make spam free; a signature limit of zero would forbid every tx."""
    for field in ("tx_sig_limit", "tx_size_cost_per_byte", "sig_verify_cost_secp256k1", "max_memo_characters"):
        if getattr(params, field) == 0:
            raise ValueError(f"auth param {field} must be positive")


class AuthModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: AccountKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return json_format.MessageToDict(genesis_pb2.GenesisState())

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """Accounts keep their stated numbers, sequences and keys (an export's); numbers stated twice (a new
        chain's accounts all state 0) are renumbered as the SDK does, and new accounts follow the highest."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        validate_params(genesis.params)
        self.keeper.set_params(ctx, genesis.params)
        accounts = [_genesis_account(packed) for packed in genesis.accounts]
        bases = [a.base_account if isinstance(a, auth_pb2.ModuleAccount) else a for a in accounts]
        addresses = [bech32.decode(base.address) for base in bases]
        if len(set(addresses)) != len(addresses):
            raise ValueError("auth genesis lists an account twice")
        renumber_duplicates(bases)
        for account in accounts:
            if isinstance(account, auth_pb2.ModuleAccount):
                self.keeper.set_module_account(ctx, account)
            else:
                self.keeper.set_account(ctx, account)
        if bases:
            self.keeper.set_next_account_number(ctx, max(base.account_number for base in bases) + 1)
        self.keeper.ensure_module_account(ctx, keys.FEE_COLLECTOR)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """Params and every account, module accounts too, with its number, sequence and public key."""
        accounts = self.keeper.packed_accounts(ctx)
        return message_dict(genesis_pb2.GenesisState(params=self.keeper.get_params(ctx), accounts=accounts))

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Account": QueryRoute(query_pb2.QueryAccountRequest, self.query_account, bounded=True),
            QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            QUERY + "Accounts": QueryRoute(query_pb2.QueryAccountsRequest, self.query_accounts),
            QUERY + "ModuleAccounts": QueryRoute(
                query_pb2.QueryModuleAccountsRequest, self.query_module_accounts, bounded=True
            ),
            QUERY + "ModuleAccountByName": QueryRoute(
                query_pb2.QueryModuleAccountByNameRequest, self.query_module_account_by_name, bounded=True
            ),
        }

    def query_module_accounts(
        self, ctx: Context, req: query_pb2.QueryModuleAccountsRequest
    ) -> query_pb2.QueryModuleAccountsResponse:
        """The app's declared module accounts by name (a handful of keys, not a scan of every account)."""
        found = (self.keeper.get_module_account(ctx, name) for name in self.keeper.module_accounts)
        return query_pb2.QueryModuleAccountsResponse(accounts=[_packed(a) for a in found if a is not None])

    def query_module_account_by_name(
        self, ctx: Context, req: query_pb2.QueryModuleAccountByNameRequest
    ) -> query_pb2.QueryModuleAccountByNameResponse:
        if not req.name:
            raise ErrInvalidRequest.wrap("module name is empty")
        account = self.keeper.get_module_account(ctx, req.name)
        if account is None:
            raise ErrNotFound.wrap(f"module account {req.name!r} not found")
        return query_pb2.QueryModuleAccountByNameResponse(account=_packed(account))

    def query_accounts(self, ctx: Context, req: query_pb2.QueryAccountsRequest) -> query_pb2.QueryAccountsResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.ACCOUNT_PREFIX, req.pagination)
        return query_pb2.QueryAccountsResponse(accounts=[AnyPb.FromString(v) for _, v in entries], pagination=page)

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_account(self, ctx: Context, req: query_pb2.QueryAccountRequest) -> query_pb2.QueryAccountResponse:
        try:
            address = bech32.decode(req.address)
        except ValueError as exc:
            raise ErrInvalidAddress.wrap(str(exc)) from None
        account = self.keeper.get_account(ctx, address)
        if account is None:
            raise ErrNotFound.wrap(f"account {req.address} not found")
        return query_pb2.QueryAccountResponse(account=_packed(account))


def _genesis_account(packed: AnyPb) -> auth_pb2.BaseAccount | auth_pb2.ModuleAccount:
    for kind in (auth_pb2.BaseAccount, auth_pb2.ModuleAccount):
        if packed.Is(kind.DESCRIPTOR):
            account = kind()
            packed.Unpack(account)
            return account
    raise ValueError(f"auth genesis account type {packed.type_url!r} is not a BaseAccount or ModuleAccount")


def renumber_duplicates(accounts: list[auth_pb2.BaseAccount]) -> None:
    """The SDK's SanitizeGenesisAccounts: each account stating a number an earlier one states gets the lowest
    unused number (by duplicated number, then list order), so a genesis of unnumbered accounts numbers them
    0, 1, … in list order and an exported one keeps its numbers."""
    seen: set[int] = set()
    duplicates = []
    for account in accounts:
        if account.account_number in seen:
            duplicates.append(account)
        seen.add(account.account_number)
    free = 0
    for account in sorted(duplicates, key=lambda a: a.account_number):
        while free in seen:
            free += 1
        account.account_number = free
        seen.add(free)


def _packed(account: Message) -> AnyPb:
    packed = AnyPb()
    packed.Pack(account, type_url_prefix="/")
    return packed
