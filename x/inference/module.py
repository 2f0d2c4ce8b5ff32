"""x/inference wired as a module: its messages (params, models, ML nodes, start, reassign and finish: msg_server.py),
end block (timeouts and pruning: lifecycle.py; block roots: work.py), genesis, queries (query_server.py) and
the invariants ``inference/escrow-held`` and ``inference/index-consistent`` (invariants.py). The epoch hook
(epoch roots) is the keeper, registered in app.py."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from sdk.telemetry.figures import Figure
from x.inference import genesis, invariants, keys, lifecycle, metrics, msg_server, query_server, work
from x.inference.keeper import InferenceKeeper


class InferenceModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: InferenceKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        k = self.keeper
        height = ctx.header.height
        params = k.get_params(ctx)
        lifecycle.expire_due(k, ctx, height, params)
        work.commit_block_roots(k, ctx)
        lifecycle.prune_ended(k, ctx, height)
        work.prune_leaves(k, ctx, height)
        work.prune_block_work(k, ctx, height, params)

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "escrow-held": lambda ctx: invariants.escrow_held(k, ctx),
            "index-consistent": lambda ctx: invariants.index_consistent(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def metrics(self, ctx: Context) -> list[Figure]:
        return metrics.figures(self.keeper, ctx)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
