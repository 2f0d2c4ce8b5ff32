"""x/epochs wired as a module: the epoch moves on in begin block, before every other module's."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.module import BaseModule, MsgRoute, QueryRoute
from sdk.telemetry.figures import Figure
from x.epochs import genesis, keys, metrics, msg_server, query_server
from x.epochs.keeper import EpochsKeeper


class EpochsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: EpochsKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.begin_block(ctx)

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def metrics(self, ctx: Context) -> list[Figure]:
        return metrics.figures(self.keeper, ctx)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
