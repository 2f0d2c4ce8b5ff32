"""cosmos.upgrade.v1beta1.Query: CurrentPlan, AppliedPlan, ModuleVersions, Authority (UpgradedConsensusState
is IBC's and deprecated: not served)."""

from __future__ import annotations

from cosmpy.protos.cosmos.upgrade.v1beta1 import query_pb2, upgrade_pb2

from sdk.context import Context
from sdk.crypto import bech32
from sdk.module import QueryRoute
from sdk.services import cosmos
from x.upgrade.errors import ErrNoModuleVersionFound
from x.upgrade.keeper import UpgradeKeeper


def routes(keeper: UpgradeKeeper) -> dict[str, QueryRoute]:
    def current_plan(ctx: Context, req: query_pb2.QueryCurrentPlanRequest) -> query_pb2.QueryCurrentPlanResponse:
        plan = keeper.plan(ctx)
        return query_pb2.QueryCurrentPlanResponse(plan=plan) if plan else query_pb2.QueryCurrentPlanResponse()

    def applied_plan(ctx: Context, req: query_pb2.QueryAppliedPlanRequest) -> query_pb2.QueryAppliedPlanResponse:
        return query_pb2.QueryAppliedPlanResponse(height=keeper.done_height(ctx, req.name))

    def module_versions(
        ctx: Context, req: query_pb2.QueryModuleVersionsRequest
    ) -> query_pb2.QueryModuleVersionsResponse:
        """All stored versions by module name, or the one of ``module_name`` (``upgrade/4`` if none)."""
        versions = keeper.module_versions(ctx)
        if req.module_name:
            if req.module_name not in versions:
                raise ErrNoModuleVersionFound.wrap(f"module {req.module_name} not found")
            versions = {req.module_name: versions[req.module_name]}
        return query_pb2.QueryModuleVersionsResponse(
            module_versions=[upgrade_pb2.ModuleVersion(name=n, version=v) for n, v in versions.items()]
        )

    def authority(ctx: Context, req: query_pb2.QueryAuthorityRequest) -> query_pb2.QueryAuthorityResponse:
        return query_pb2.QueryAuthorityResponse(address=bech32.encode(keeper.authority))

    prefix = cosmos("upgrade").query
    return {
        prefix + "CurrentPlan": QueryRoute(query_pb2.QueryCurrentPlanRequest, current_plan, bounded=True),
        prefix + "AppliedPlan": QueryRoute(query_pb2.QueryAppliedPlanRequest, applied_plan, bounded=True),
        prefix + "ModuleVersions": QueryRoute(query_pb2.QueryModuleVersionsRequest, module_versions, bounded=True),
        prefix + "Authority": QueryRoute(query_pb2.QueryAuthorityRequest, authority, bounded=True),
    }
