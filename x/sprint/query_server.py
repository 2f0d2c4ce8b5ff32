"""``gonka.sprint.v1.Query``: the params, an epoch's race randomness, commitments, validations and weights."""

from __future__ import annotations

from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.module import QueryRoute
from sdk.services import gonka
from x.sprint.keeper import SprintKeeper


class QueryServer:
    def __init__(self, keeper: SprintKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("sprint").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Race": QueryRoute(query_pb2.QueryRaceRequest, self.race, bounded=True),
            query + "Commitments": QueryRoute(query_pb2.QueryCommitmentsRequest, self.commitments),
            query + "Validations": QueryRoute(query_pb2.QueryValidationsRequest, self.validations),
            query + "Weights": QueryRoute(query_pb2.QueryWeightsRequest, self.weights, bounded=True),
        }

    def _epoch(self, ctx: Context, epoch: int) -> int:
        """0 asks for the current epoch."""
        return epoch or self.keeper.epochs.current_epoch(ctx).number

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def race(self, ctx: Context, req: query_pb2.QueryRaceRequest) -> query_pb2.QueryRaceResponse:
        epoch = self._epoch(ctx, req.epoch)
        return query_pb2.QueryRaceResponse(race=self.keeper.race(ctx, epoch) or sprint_pb2.Race(epoch=epoch))

    def commitments(self, ctx: Context, req: query_pb2.QueryCommitmentsRequest) -> query_pb2.QueryCommitmentsResponse:
        return query_pb2.QueryCommitmentsResponse(commitments=self.keeper.commitments(ctx, self._epoch(ctx, req.epoch)))

    def validations(self, ctx: Context, req: query_pb2.QueryValidationsRequest) -> query_pb2.QueryValidationsResponse:
        host = parse_address(req.host, "host") if req.host else b""
        return query_pb2.QueryValidationsResponse(
            validations=self.keeper.validations(ctx, self._epoch(ctx, req.epoch), host)
        )

    def weights(self, ctx: Context, req: query_pb2.QueryWeightsRequest) -> query_pb2.QueryWeightsResponse:
        epoch = self._epoch(ctx, req.epoch)
        return query_pb2.QueryWeightsResponse(
            result=self.keeper.result(ctx, epoch) or sprint_pb2.EpochResult(epoch=epoch)
        )
