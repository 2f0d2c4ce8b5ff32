"""x/vesting wired as a module: genesis (schedules, genesis vesting accounts, delegation tracking, the last
block time), the block time kept at begin block, params, queries and invariants."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.vesting import genesis, invariants, keys, msg_server, query_server
from x.vesting.keeper import VestingKeeper


class VestingModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: VestingKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        """Keep the block time: locks by time are computed at it, in this block and in queries after it."""
        self.keeper.set_last_block_time(ctx, block.time_ns)

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "scheduled-accounted": lambda ctx: invariants.scheduled_accounted(k, ctx),
            "locked-held": lambda ctx: invariants.locked_held(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
