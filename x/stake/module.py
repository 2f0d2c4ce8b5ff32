"""x/stake wired as a module: hosts and collateral, and the validator set CometBFT runs with."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from sdk.telemetry.figures import Figure
from x.stake import genesis, invariants, keys, metrics, msg_server, query_server
from x.stake.keeper import StakeKeeper


class StakeModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: StakeKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        """The block's validator set changes (a set-validators stage, a jailing), as one diff against the
        set last sent to CometBFT; a block that wrote no power table sends nothing (nothing else changes it)."""
        if self.keeper.power_table_written:
            ctx.validator_updates.extend(self.keeper.apply_validator_set_updates(ctx))
            self.keeper.power_table_written = False  # only once sent: a failed diff is tried again next block

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "collateral-held": lambda ctx: invariants.collateral_held(k, ctx),
            "power-table-sent": lambda ctx: invariants.power_table_sent(k, ctx),
            "jailed-out-of-set": lambda ctx: invariants.jailed_out_of_set(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def metrics(self, ctx: Context) -> list[Figure]:
        return metrics.figures(self.keeper, ctx)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
