"""``cosmos.auth.v1beta1.Query``: accounts, module accounts and params, as the Cosmos SDK serves them."""

from __future__ import annotations

from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message

from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrInvalidRequest, ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import cosmos
from x.auth import keys
from x.auth.keeper import AccountKeeper


class QueryServer:
    def __init__(self, keeper: AccountKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = cosmos("auth").query
        return {
            query + "Account": QueryRoute(query_pb2.QueryAccountRequest, self.account, bounded=True),
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Accounts": QueryRoute(query_pb2.QueryAccountsRequest, self.accounts),
            query + "ModuleAccounts": QueryRoute(
                query_pb2.QueryModuleAccountsRequest, self.module_accounts, bounded=True
            ),
            query + "ModuleAccountByName": QueryRoute(
                query_pb2.QueryModuleAccountByNameRequest, self.module_account_by_name, bounded=True
            ),
        }

    def module_accounts(
        self, ctx: Context, req: query_pb2.QueryModuleAccountsRequest
    ) -> query_pb2.QueryModuleAccountsResponse:
        """The app's declared module accounts by name (a handful of keys, not a scan of every account)."""
        found = (self.keeper.get_module_account(ctx, name) for name in self.keeper.module_accounts)
        return query_pb2.QueryModuleAccountsResponse(accounts=[_packed(a) for a in found if a is not None])

    def module_account_by_name(
        self, ctx: Context, req: query_pb2.QueryModuleAccountByNameRequest
    ) -> query_pb2.QueryModuleAccountByNameResponse:
        if not req.name:
            raise ErrInvalidRequest.wrap("module name is empty")
        account = self.keeper.get_module_account(ctx, req.name)
        if account is None:
            raise ErrNotFound.wrap(f"module account {req.name!r} not found")
        return query_pb2.QueryModuleAccountByNameResponse(account=_packed(account))

    def accounts(self, ctx: Context, req: query_pb2.QueryAccountsRequest) -> query_pb2.QueryAccountsResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.ACCOUNT_PREFIX, req.pagination)
        return query_pb2.QueryAccountsResponse(accounts=[AnyPb.FromString(v) for _, v in entries], pagination=page)

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def account(self, ctx: Context, req: query_pb2.QueryAccountRequest) -> query_pb2.QueryAccountResponse:
        try:
            address = bech32.decode(req.address)
        except ValueError as exc:
            raise ErrInvalidAddress.wrap(str(exc)) from None
        account = self.keeper.get_account(ctx, address)
        if account is None:
            raise ErrNotFound.wrap(f"account {req.address} not found")
        return query_pb2.QueryAccountResponse(account=_packed(account))


def _packed(account: Message) -> AnyPb:
    packed = AnyPb()
    packed.Pack(account, type_url_prefix="/")
    return packed
