"""x/upgrade wired as a module: cosmos.upgrade.v1beta1 messages and queries, its genesis, and the PreBlocker
that applies a plan at its height or halts the node (keeper.py).

Node-local config (app.toml ``[modules.upgrade]``, set by ``gonkad start``): ``info_file``, where to write
``upgrade-info.json`` when the node halts for a plan (the home's ``data/upgrade-info.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.module import BaseModule, Migration, MsgRoute, QueryRoute
from x.upgrade import genesis, keys, msg_server, query_server
from x.upgrade.keeper import UpgradeKeeper


class UpgradeModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(
        self, keeper: UpgradeKeeper, consensus_version: int = 1, migrations: Mapping[int, Migration] | None = None
    ) -> None:
        """``consensus_version`` and ``migrations``: x/upgrade's own (only a test binary raises them:
        x/upgrade/rehearsal.py)."""
        self.keeper = keeper
        self.consensus_version = consensus_version
        self._migrations = dict(migrations or {})

    def migrations(self) -> dict[int, Migration]:
        return dict(self._migrations)

    def configure(self, config: Mapping[str, Any]) -> None:
        unknown = sorted(set(config) - {"info_file"})
        if unknown:
            raise ValueError(f"module upgrade: unknown node-local settings {unknown}")
        if "info_file" in config:
            self.keeper.info_file = Path(config["info_file"])

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def pre_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.pre_block(ctx)

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.routes(self.keeper)
