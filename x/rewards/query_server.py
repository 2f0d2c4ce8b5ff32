"""``gonka.rewards.v1.Query``: params, the next issuance, a host's rewards and what was minted."""

from __future__ import annotations

from protogen.gonka.rewards.v1 import query_pb2
from sdk.address import parse_address
from sdk.coins import make_coins
from sdk.context import Context
from sdk.module import QueryRoute
from sdk.services import gonka
from x.rewards.keeper import RewardsKeeper
from x.rewards.params import amount


class QueryServer:
    def __init__(self, keeper: RewardsKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("rewards").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "NextIssuance": QueryRoute(query_pb2.QueryNextIssuanceRequest, self.next_issuance, bounded=True),
            query + "HostRewards": QueryRoute(query_pb2.QueryHostRewardsRequest, self.host_rewards, bounded=True),
            query + "Minted": QueryRoute(query_pb2.QueryMintedRequest, self.minted, bounded=True),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def next_issuance(
        self, ctx: Context, req: query_pb2.QueryNextIssuanceRequest
    ) -> query_pb2.QueryNextIssuanceResponse:
        """What the end of the current epoch (of the last committed block) mints."""
        epoch = self.keeper.epochs.current_epoch(ctx).number
        minted, uncapped = self.keeper.issuance(ctx, epoch)
        return query_pb2.QueryNextIssuanceResponse(
            epoch=epoch, amount=str(minted), uncapped=str(uncapped), denom=self.keeper.get_params(ctx).mint_denom
        )

    def host_rewards(self, ctx: Context, req: query_pb2.QueryHostRewardsRequest) -> query_pb2.QueryHostRewardsResponse:
        host = parse_address(req.host, "host")
        rewarded = dict(self.keeper.host_rewarded(ctx, host))
        pending = {d: min(a, rewarded.get(d, 0)) for d, a in self.keeper.host_pending(ctx, host)}
        vested = make_coins([(d, a - pending.get(d, 0)) for d, a in rewarded.items() if a > pending.get(d, 0)])
        return query_pb2.QueryHostRewardsResponse(
            rewarded=make_coins(list(rewarded.items())).to_proto(),
            pending=make_coins([(d, a) for d, a in pending.items() if a]).to_proto(),
            vested=vested.to_proto(),
        )

    def minted(self, ctx: Context, req: query_pb2.QueryMintedRequest) -> query_pb2.QueryMintedResponse:
        params = self.keeper.get_params(ctx)
        minted, cap = self.keeper.minted(ctx), amount(params, "issuance_cap")
        return query_pb2.QueryMintedResponse(
            minted=str(minted), cap=str(cap), remaining=str(max(0, cap - minted)), denom=params.mint_denom
        )
