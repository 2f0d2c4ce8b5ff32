"""``gonka.vesting.v1.Query``: params, an account's schedule and what it has locked."""

from __future__ import annotations

from protogen.gonka.vesting.v1 import query_pb2, vesting_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.module import QueryRoute
from sdk.services import gonka
from x.vesting.keeper import VestingKeeper, to_proto


class QueryServer:
    def __init__(self, keeper: VestingKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("vesting").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Schedule": QueryRoute(query_pb2.QueryScheduleRequest, self.schedule),
            query + "Locked": QueryRoute(query_pb2.QueryLockedRequest, self.locked, bounded=True),
        }

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def schedule(self, ctx: Context, req: query_pb2.QueryScheduleRequest) -> query_pb2.QueryScheduleResponse:
        """Every pending part in release order, the account's totals and its lock by time (empty if none)."""
        address = parse_address(req.address, "address")
        k = self.keeper
        reply = query_pb2.QueryScheduleResponse(parts=k.parts(ctx, address))
        reply.totals.CopyFrom(k.get_account(ctx, address) or vesting_pb2.VestingAccount(address=req.address))
        timed = k.get_timed(ctx, address)
        if timed is not None:
            reply.timed.CopyFrom(timed)
        return reply

    def locked(self, ctx: Context, req: query_pb2.QueryLockedRequest) -> query_pb2.QueryLockedResponse:
        """At the last committed block: what bank refuses to send, everything still vesting, and the
        delegation tracking between them."""
        address = parse_address(req.address, "address")
        k = self.keeper
        account = k.get_account(ctx, address) or vesting_pb2.VestingAccount()
        return query_pb2.QueryLockedResponse(
            locked=k.locked_coins(ctx, address).to_proto(),
            vesting=to_proto(k.vesting_coins(ctx, address)),
            delegated_vesting=account.delegated_vesting,
            delegated_free=account.delegated_free,
        )
