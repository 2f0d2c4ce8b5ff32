"""x/sprint wired as a module: the race's messages and queries, genesis and invariants; its stage work runs in
the epoch hooks (keeper.on_stage), which app.py hands x/epochs before x/stake's."""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.sprint import genesis, invariants, keys, msg_server, query_server
from x.sprint.keeper import SprintKeeper


class SprintModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: SprintKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def invariants(self) -> dict[str, Invariant]:
        return {
            "validations-committed": lambda ctx: invariants.validations_committed(self.keeper, ctx),
            "results-add-up": lambda ctx: invariants.results_add_up(self.keeper, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
