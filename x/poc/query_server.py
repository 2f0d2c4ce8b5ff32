"""``gonka.poc.v1.Query``: the params, an inference's validation record, a host's record, a validator's pending
verdicts and votes, the hosts of a status."""

from __future__ import annotations

from protogen.gonka.poc.v1 import query_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.errors import ErrInvalidRequest, ErrNotFound
from sdk.module import QueryRoute
from sdk.services import gonka
from x.poc import types
from x.poc.keeper import PocKeeper


class QueryServer:
    def __init__(self, keeper: PocKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("poc").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Validation": QueryRoute(query_pb2.QueryValidationRequest, self.validation, bounded=True),
            query + "Host": QueryRoute(query_pb2.QueryHostRequest, self.host, bounded=True),
            query + "Assigned": QueryRoute(query_pb2.QueryAssignedRequest, self.assigned),
            query + "Hosts": QueryRoute(query_pb2.QueryHostsRequest, self.hosts),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def validation(self, ctx: Context, req: query_pb2.QueryValidationRequest) -> query_pb2.QueryValidationResponse:
        """``sdk/38`` for an inference with no record (never finished, or its settled record pruned)."""
        try:
            inference_id = bytes.fromhex(req.inference_id)
        except ValueError:
            raise ErrInvalidRequest.wrap(f"inference id {req.inference_id!r} is not hex") from None
        record = self.keeper.get_validation(ctx, inference_id)
        if record is None:
            raise ErrNotFound.wrap(f"no validation record for inference {req.inference_id}")
        return query_pb2.QueryValidationResponse(validation=record)

    def host(self, ctx: Context, req: query_pb2.QueryHostRequest) -> query_pb2.QueryHostResponse:
        address = parse_address(req.address, "address")
        return query_pb2.QueryHostResponse(
            host=self.keeper.get_host(ctx, address), rate=types.rate_text(self.keeper.get_rate(ctx, address))
        )

    def assigned(self, ctx: Context, req: query_pb2.QueryAssignedRequest) -> query_pb2.QueryAssignedResponse:
        validator = parse_address(req.validator, "validator")
        return query_pb2.QueryAssignedResponse(validations=self.keeper.assigned(ctx, validator))

    def hosts(self, ctx: Context, req: query_pb2.QueryHostsRequest) -> query_pb2.QueryHostsResponse:
        records = self.keeper.hosts(ctx)
        if req.status:
            records = [r for r in records if r.status == req.status]
        return query_pb2.QueryHostsResponse(hosts=records)
