"""``gonka.epochs.v1.Query``: the schedule and the current epoch and stage."""

from __future__ import annotations

from protogen.gonka.epochs.v1 import query_pb2
from sdk.context import Context
from sdk.module import QueryRoute
from sdk.services import gonka
from x.epochs import schedule
from x.epochs.keeper import EpochsKeeper


class QueryServer:
    def __init__(self, keeper: EpochsKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("epochs").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "CurrentEpoch": QueryRoute(query_pb2.QueryCurrentEpochRequest, self.current_epoch, bounded=True),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def current_epoch(
        self, ctx: Context, req: query_pb2.QueryCurrentEpochRequest
    ) -> query_pb2.QueryCurrentEpochResponse:
        """The last committed block's epoch and stage, and the heights where the next stage and epoch begin."""
        height = ctx.header.height
        epoch = self.keeper.current_epoch(ctx)
        stage, stage_height = schedule.next_stage(epoch, height)
        return query_pb2.QueryCurrentEpochResponse(
            height=height,
            epoch=epoch,
            stage=schedule.stage_at(epoch, max(height, epoch.start_height)),
            next_stage=stage,
            next_stage_height=stage_height,
            next_epoch_height=schedule.next_epoch_height(epoch),
        )
