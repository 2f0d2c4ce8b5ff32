"""x/pool wired as a module: the community pool's messages in the Cosmos shape
(``cosmos.distribution.v1beta1.MsgFundCommunityPool``, ``MsgCommunityPoolSpend``, ``Query/CommunityPool``),
its params and accounts (``gonka.pool.v1``), genesis and the invariant ``pool/balance-accounted``."""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.pool import genesis, keys, msg_server, query_server
from x.pool.keeper import PoolKeeper


class PoolModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: PoolKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def invariants(self) -> dict[str, Invariant]:
        return {"balance-accounted": self.keeper.balance_accounted}

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
