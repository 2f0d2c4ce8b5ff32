"""``gonka.learning.v1.Query``: answered over ABCI query by method path and by the node's gRPC server."""

from __future__ import annotations

from protogen.gonka.learning.v1 import learning_pb2, query_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.errors import ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import gonka
from x.learning import keys
from x.learning.keeper import LearningKeeper


class QueryServer:
    def __init__(self, keeper: LearningKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("learning").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Run": QueryRoute(query_pb2.QueryRunRequest, self.run, bounded=True),
            query + "Runs": QueryRoute(query_pb2.QueryRunsRequest, self.runs),
            query + "Checkpoint": QueryRoute(query_pb2.QueryCheckpointRequest, self.checkpoint, bounded=True),
            query + "Checkpoints": QueryRoute(query_pb2.QueryCheckpointsRequest, self.checkpoints),
            query + "Verdicts": QueryRoute(query_pb2.QueryVerdictsRequest, self.verdicts),
            query + "Assigned": QueryRoute(query_pb2.QueryAssignedRequest, self.assigned),
            query + "Owed": QueryRoute(query_pb2.QueryOwedRequest, self.owed),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def run(self, ctx: Context, req: query_pb2.QueryRunRequest) -> query_pb2.QueryRunResponse:
        run = self.keeper.get_run(ctx, req.run_id)
        if run is None:
            raise ErrNotFound.wrap(f"training run {req.run_id}")
        return query_pb2.QueryRunResponse(run=run)

    def runs(self, ctx: Context, req: query_pb2.QueryRunsRequest) -> query_pb2.QueryRunsResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.RUN_PREFIX, req.pagination)
        return query_pb2.QueryRunsResponse(
            runs=[learning_pb2.TrainingRun.FromString(raw) for _, raw in entries], pagination=page
        )

    def checkpoint(self, ctx: Context, req: query_pb2.QueryCheckpointRequest) -> query_pb2.QueryCheckpointResponse:
        parse_address(req.worker, "worker")
        checkpoint = self.keeper.get_checkpoint(ctx, req.run_id, req.round, req.worker)
        if checkpoint is None:
            raise ErrNotFound.wrap(f"checkpoint of run {req.run_id} round {req.round} worker {req.worker}")
        return query_pb2.QueryCheckpointResponse(checkpoint=checkpoint)

    def checkpoints(self, ctx: Context, req: query_pb2.QueryCheckpointsRequest) -> query_pb2.QueryCheckpointsResponse:
        return query_pb2.QueryCheckpointsResponse(checkpoints=self.keeper.round_checkpoints(ctx, req.run_id, req.round))

    def verdicts(self, ctx: Context, req: query_pb2.QueryVerdictsRequest) -> query_pb2.QueryVerdictsResponse:
        prefix = keys.checkpoint_verdicts_prefix(req.run_id, req.round, parse_address(req.worker, "worker"))
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), prefix, req.pagination)
        return query_pb2.QueryVerdictsResponse(
            verdicts=[learning_pb2.Verdict.FromString(raw) for _, raw in entries], pagination=page
        )

    def assigned(self, ctx: Context, req: query_pb2.QueryAssignedRequest) -> query_pb2.QueryAssignedResponse:
        verifier = parse_address(req.verifier, "verifier")
        return query_pb2.QueryAssignedResponse(checkpoints=self.keeper.assigned(ctx, verifier))

    def owed(self, ctx: Context, req: query_pb2.QueryOwedRequest) -> query_pb2.QueryOwedResponse:
        parse_address(req.worker, "worker")
        return query_pb2.QueryOwedResponse(checkpoints=self.keeper.owed(ctx, req.worker))
