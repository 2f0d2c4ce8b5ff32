"""``cosmos.slashing.v1beta1.Query`` (params, signing records) and ``gonka.slashing.v1.Query/Params``."""

from __future__ import annotations

from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.slashing.v1beta1 import slashing_pb2

from protogen.gonka.slashing.v1 import query_pb2
from sdk.context import Context
from sdk.errors import ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import cosmos, gonka
from x.slashing import keys
from x.slashing.keeper import SlashingKeeper
from x.slashing.params import cosmos_params


class QueryServer:
    def __init__(self, keeper: SlashingKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        cosmos_prefix = cosmos("slashing").query
        gonka_prefix = gonka("slashing").query
        return {
            cosmos_prefix + "Params": QueryRoute(cosmos_query.QueryParamsRequest, self.cosmos_params, bounded=True),
            cosmos_prefix + "SigningInfo": QueryRoute(
                cosmos_query.QuerySigningInfoRequest, self.signing_info, bounded=True
            ),
            cosmos_prefix + "SigningInfos": QueryRoute(cosmos_query.QuerySigningInfosRequest, self.signing_infos),
            gonka_prefix + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def cosmos_params(self, ctx: Context, req: cosmos_query.QueryParamsRequest) -> cosmos_query.QueryParamsResponse:
        return cosmos_query.QueryParamsResponse(params=cosmos_params(self.keeper.get_params(ctx)))

    def signing_info(
        self, ctx: Context, req: cosmos_query.QuerySigningInfoRequest
    ) -> cosmos_query.QuerySigningInfoResponse:
        info = self.keeper.signing_info(ctx, keys.consensus_address_of(req.cons_address))
        if info is None:
            raise ErrNotFound.wrap(f"no signing info for {req.cons_address}")
        return cosmos_query.QuerySigningInfoResponse(val_signing_info=info)

    def signing_infos(
        self, ctx: Context, req: cosmos_query.QuerySigningInfosRequest
    ) -> cosmos_query.QuerySigningInfosResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.SIGNING_INFO_PREFIX, req.pagination)
        return cosmos_query.QuerySigningInfosResponse(
            info=[slashing_pb2.ValidatorSigningInfo.FromString(v) for _, v in entries], pagination=page
        )
