"""x/auth wired as a module: genesis accounts, module accounts, account queries."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, genesis_pb2, query_pb2
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrNotFound
from sdk.module import BaseModule, QueryRoute
from sdk.pagination import paginate
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
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        validate_params(genesis.params)
        self.keeper.set_params(ctx, genesis.params)
        for packed in genesis.accounts:
            account = auth_pb2.BaseAccount()
            packed.Unpack(account)
            self.keeper.ensure_account(ctx, bech32.decode(account.address))
        self.keeper.ensure_module_account(ctx, keys.FEE_COLLECTOR, [])

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Account": QueryRoute(query_pb2.QueryAccountRequest, self.query_account, bounded=True),
            QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            QUERY + "Accounts": QueryRoute(query_pb2.QueryAccountsRequest, self.query_accounts),
        }

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
        response = query_pb2.QueryAccountResponse()
        response.account.Pack(account, type_url_prefix="/")
        return response
