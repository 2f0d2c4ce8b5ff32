"""x/rewards wired as a module: epoch rewards (its epoch hook is the keeper), params, genesis, queries and
the invariant ``rewards/minted-within-cap``."""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.rewards import genesis, keys, msg_server, query_server
from x.rewards.keeper import RewardsKeeper


class RewardsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: RewardsKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def invariants(self) -> dict[str, Invariant]:
        return {"minted-within-cap": self.keeper.minted_within_cap}

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
