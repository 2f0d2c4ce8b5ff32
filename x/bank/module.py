"""x/bank wired as a module: genesis (genesis.py), message routes (msg_server.py), query routes
(query_server.py) and invariants (invariants.py)."""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.bank import genesis, invariants, keys, msg_server, query_server
from x.bank.keeper import BankKeeper


class BankModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BankKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def invariants(self) -> dict[str, Invariant]:
        return {
            "nonnegative-balances": invariants.nonnegative_balances,
            "total-supply": invariants.total_supply,
            "supply-accounted": invariants.supply_accounted,
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
