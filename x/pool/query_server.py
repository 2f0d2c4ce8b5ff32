"""``cosmos.distribution.v1beta1.Query/CommunityPool`` and ``gonka.pool.v1.Query``: the balance, params, totals."""

from __future__ import annotations

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query

from protogen.gonka.pool.v1 import pool_pb2, query_pb2
from sdk.coins import Coins
from sdk.context import Context
from sdk.dec import PRECISION
from sdk.module import QueryRoute
from sdk.services import cosmos, gonka
from x.pool.keeper import PoolKeeper


class QueryServer:
    def __init__(self, keeper: PoolKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        cosmos_prefix = cosmos("distribution").query
        gonka_prefix = gonka("pool").query
        return {
            cosmos_prefix + "CommunityPool": QueryRoute(
                distribution_query.QueryCommunityPoolRequest, self.community_pool, bounded=True
            ),
            gonka_prefix + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            gonka_prefix + "Totals": QueryRoute(query_pb2.QueryTotalsRequest, self.totals, bounded=True),
        }

    def community_pool(
        self, ctx: Context, req: distribution_query.QueryCommunityPoolRequest
    ) -> distribution_query.QueryCommunityPoolResponse:
        return distribution_query.QueryCommunityPoolResponse(pool=dec_coins(self.keeper.balance(ctx)))

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def totals(self, ctx: Context, req: query_pb2.QueryTotalsRequest) -> query_pb2.QueryTotalsResponse:
        k = self.keeper
        return query_pb2.QueryTotalsResponse(
            balance=k.balance(ctx).to_proto(),
            inflows=[pool_pb2.SourceTotal(source=s, amount=c.to_proto()) for s, c in k.inflows(ctx).items()],
            spent=k.spent(ctx).to_proto(),
        )


def dec_coins(coins: Coins) -> list[coin_pb2.DecCoin]:
    """Coins as ``DecCoin``s the way the Cosmos SDK puts a LegacyDec on the wire: the value × 10^18 in
    digits (1ngonka is ``1000000000000000000``; its JSON gateway prints ``1.000000000000000000``)."""
    return [coin_pb2.DecCoin(denom=denom, amount=str(amount * 10**PRECISION)) for denom, amount in coins]
