"""``cosmos.bank.v1beta1.Query``: balances, supply, params and denom metadata, as the Cosmos SDK serves them."""

from __future__ import annotations

from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2

from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import cosmos
from x.bank import keys
from x.bank.keeper import BankKeeper


class QueryServer:
    def __init__(self, keeper: BankKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = cosmos("bank").query
        return {
            query + "Balance": QueryRoute(query_pb2.QueryBalanceRequest, self.balance, bounded=True),
            query + "AllBalances": QueryRoute(query_pb2.QueryAllBalancesRequest, self.all_balances),
            query + "SpendableBalances": QueryRoute(query_pb2.QuerySpendableBalancesRequest, self.spendable_balances),
            query + "SpendableBalanceByDenom": QueryRoute(
                query_pb2.QuerySpendableBalanceByDenomRequest, self.spendable_balance_by_denom
            ),
            query + "TotalSupply": QueryRoute(query_pb2.QueryTotalSupplyRequest, self.total_supply),
            query + "SupplyOf": QueryRoute(query_pb2.QuerySupplyOfRequest, self.supply_of, bounded=True),
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "DenomMetadata": QueryRoute(query_pb2.QueryDenomMetadataRequest, self.denom_metadata, bounded=True),
        }

    def supply_of(self, ctx: Context, req: query_pb2.QuerySupplyOfRequest) -> query_pb2.QuerySupplyOfResponse:
        amount = self.keeper.get_supply(ctx, req.denom)
        return query_pb2.QuerySupplyOfResponse(amount={"denom": req.denom, "amount": str(amount)})

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def denom_metadata(
        self, ctx: Context, req: query_pb2.QueryDenomMetadataRequest
    ) -> query_pb2.QueryDenomMetadataResponse:
        metadata = self.keeper.get_denom_metadata(ctx, req.denom)
        if metadata is None:
            raise ErrNotFound.wrap(f"client metadata for denom {req.denom!r}")
        return query_pb2.QueryDenomMetadataResponse(metadata=metadata)

    def balance(self, ctx: Context, req: query_pb2.QueryBalanceRequest) -> query_pb2.QueryBalanceResponse:
        address = _address(req.address)
        amount = self.keeper.get_balance(ctx, address, req.denom)
        return query_pb2.QueryBalanceResponse(balance={"denom": req.denom, "amount": str(amount)})

    def all_balances(self, ctx: Context, req: query_pb2.QueryAllBalancesRequest) -> query_pb2.QueryAllBalancesResponse:
        entries, page = _balances_page(ctx, _address(req.address), req.pagination)
        balances = [{"denom": denom.decode(), "amount": amount.decode()} for denom, amount in entries]
        return query_pb2.QueryAllBalancesResponse(balances=balances, pagination=page)

    def spendable_balances(
        self, ctx: Context, req: query_pb2.QuerySpendableBalancesRequest
    ) -> query_pb2.QuerySpendableBalancesResponse:
        """The denoms are paged as AllBalances pages them; each amount is what the keeper says is spendable."""
        address = _address(req.address)
        entries, page = _balances_page(ctx, address, req.pagination)
        spendable = dict(self.keeper.spendable_coins(ctx, address))
        balances = [{"denom": denom.decode(), "amount": str(spendable.get(denom.decode(), 0))} for denom, _ in entries]
        return query_pb2.QuerySpendableBalancesResponse(balances=balances, pagination=page)

    def spendable_balance_by_denom(
        self, ctx: Context, req: query_pb2.QuerySpendableBalanceByDenomRequest
    ) -> query_pb2.QuerySpendableBalanceByDenomResponse:
        amount = dict(self.keeper.spendable_coins(ctx, _address(req.address))).get(req.denom, 0)
        return query_pb2.QuerySpendableBalanceByDenomResponse(balance={"denom": req.denom, "amount": str(amount)})

    def total_supply(self, ctx: Context, req: query_pb2.QueryTotalSupplyRequest) -> query_pb2.QueryTotalSupplyResponse:
        return query_pb2.QueryTotalSupplyResponse(supply=self.keeper.get_total_supply(ctx).to_proto())


def _balances_page(
    ctx: Context, address: bytes, pagination: pagination_pb2.PageRequest
) -> tuple[list[tuple[bytes, bytes]], pagination_pb2.PageResponse]:
    """One page of the address's balances: (denom, amount as decimal text), by denom."""
    return paginate(ctx.kv(keys.STORE_PREFIX), keys.address_balances_prefix(address), pagination)


def _address(text: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(str(exc)) from None
