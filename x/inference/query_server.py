"""``gonka.inference.v1.Query``: params, models, ML nodes, inferences, block and epoch work, work proofs."""

from __future__ import annotations

from typing import TypeVar

from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.errors import ErrInvalidRequest, ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import gonka
from x.inference import keys, types, work
from x.inference.keeper import InferenceKeeper

T = TypeVar("T")


def kept(found: T | None, missing: str) -> T:
    """``found``, or ``sdk/38`` with ``missing`` if there is none."""
    if found is None:
        raise ErrNotFound.wrap(missing)
    return found


def parse_id(text: str) -> bytes:
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ErrInvalidRequest.wrap(f"inference id {text!r} must be 64 hex characters")
    return raw


def shown(model: inference_pb2.Model) -> inference_pb2.Model:
    """``model`` as the queries answer it: with the threshold in force (a stored 0 is the default's)."""
    answer = inference_pb2.Model()
    answer.CopyFrom(model)
    answer.verify_threshold = types.verify_threshold(model)
    return answer


class QueryServer:
    def __init__(self, keeper: InferenceKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("inference").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Models": QueryRoute(query_pb2.QueryModelsRequest, self.models),
            query + "Model": QueryRoute(query_pb2.QueryModelRequest, self.model, bounded=True),
            query + "Nodes": QueryRoute(query_pb2.QueryNodesRequest, self.nodes),
            query + "Inference": QueryRoute(query_pb2.QueryInferenceRequest, self.inference, bounded=True),
            query + "Inferences": QueryRoute(query_pb2.QueryInferencesRequest, self.inferences),
            query + "BlockWork": QueryRoute(query_pb2.QueryBlockWorkRequest, self.block_work, bounded=True),
            query + "EpochWork": QueryRoute(query_pb2.QueryEpochWorkRequest, self.epoch_work),
            query + "WorkProof": QueryRoute(query_pb2.QueryWorkProofRequest, self.work_proof),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def models(self, ctx: Context, req: query_pb2.QueryModelsRequest) -> query_pb2.QueryModelsResponse:
        items, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.MODEL_PREFIX, req.pagination)
        return query_pb2.QueryModelsResponse(
            models=[shown(inference_pb2.Model.FromString(v)) for _, v in items], pagination=page
        )

    def model(self, ctx: Context, req: query_pb2.QueryModelRequest) -> query_pb2.QueryModelResponse:
        return query_pb2.QueryModelResponse(
            model=shown(kept(self.keeper.get_model(ctx, req.id), f"model {req.id!r} not found"))
        )

    def nodes(self, ctx: Context, req: query_pb2.QueryNodesRequest) -> query_pb2.QueryNodesResponse:
        operator = parse_address(req.operator, "operator") if req.operator else b""
        store = ctx.kv(keys.STORE_PREFIX)
        if len(req.model.encode()) > 255:
            raise ErrInvalidRequest.wrap("model id too long")
        if req.model:
            items, page = paginate(store, keys.nodes_by_model_prefix(req.model) + operator, req.pagination)
            found = [
                self.keeper.get_node(ctx, operator + k[: 20 - len(operator)], k[20 - len(operator) :].decode())
                for k, _ in items
            ]
            nodes = [n for n in found if n is not None]
        else:
            items, page = paginate(store, keys.NODE_PREFIX + operator, req.pagination)
            nodes = [inference_pb2.MlNode.FromString(v) for _, v in items]
        return query_pb2.QueryNodesResponse(nodes=nodes, pagination=page)

    def found(self, ctx: Context, text: str) -> inference_pb2.Inference:
        """The inference of id ``text`` (64 hex); ``sdk/38`` if none is kept."""
        return kept(self.keeper.get_inference(ctx, parse_id(text)), f"inference {text} not found")

    def inference(self, ctx: Context, req: query_pb2.QueryInferenceRequest) -> query_pb2.QueryInferenceResponse:
        return query_pb2.QueryInferenceResponse(inference=self.found(ctx, req.id))

    def inferences(self, ctx: Context, req: query_pb2.QueryInferencesRequest) -> query_pb2.QueryInferencesResponse:
        if bool(req.requester) == bool(req.executor):
            raise ErrInvalidRequest.wrap("give exactly one of requester and executor")
        prefix = (
            keys.by_requester_prefix(parse_address(req.requester, "requester"))
            if req.requester
            else keys.by_executor_prefix(parse_address(req.executor, "executor"))
        )
        items, page = paginate(ctx.kv(keys.STORE_PREFIX), prefix, req.pagination)
        found = [self.keeper.get_inference(ctx, k[8:]) for k, _ in items]
        return query_pb2.QueryInferencesResponse(inferences=[i for i in found if i is not None], pagination=page)

    def block_work(self, ctx: Context, req: query_pb2.QueryBlockWorkRequest) -> query_pb2.QueryBlockWorkResponse:
        """A height below 1 names no block (and has no key): ``sdk/18``, not a lookup that cannot succeed."""
        if req.height < 1:
            raise ErrInvalidRequest.wrap(f"height must be positive, got {req.height}")
        return query_pb2.QueryBlockWorkResponse(
            work=kept(
                self.keeper.get_block_work(ctx, req.height),
                f"no work root at height {req.height} (no inference finished then, or pruned)",
            )
        )

    def epoch_work(self, ctx: Context, req: query_pb2.QueryEpochWorkRequest) -> query_pb2.QueryEpochWorkResponse:
        return query_pb2.QueryEpochWorkResponse(
            work=kept(
                work.epoch_work_view(self.keeper, ctx, req.epoch, parse_address(req.host, "host")),
                f"no work of {req.host} in epoch {req.epoch}",
            )
        )

    def work_proof(self, ctx: Context, req: query_pb2.QueryWorkProofRequest) -> query_pb2.QueryWorkProofResponse:
        inference = self.found(ctx, req.id)
        if inference.status != inference_pb2.STATUS_FINISHED:
            raise ErrNotFound.wrap(f"inference {req.id} is not finished: it has no work leaf")
        return work.work_proof(self.keeper, ctx, inference)
