"""x/poc wired as a module: the verdict message and the queries, genesis and invariants; the finish hook is
handed to x/inference in app.py, the epoch hooks (hooks.py) to x/epochs, and the end block draws, closes windows
and votes, and prunes (blocks.py)."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.poc import blocks, genesis, invariants, keys, msg_server, query_server
from x.poc.keeper import PocKeeper


class PocModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: PocKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        blocks.process_block(self.keeper, ctx, block.height)

    def invariants(self) -> dict[str, Invariant]:
        return {
            "queues-consistent": lambda ctx: invariants.queues_consistent(self.keeper, ctx),
            "validators-drawn": lambda ctx: invariants.validators_drawn(self.keeper, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
