"""x/gov wired as a module: cosmos.gov.v1 messages, queries and genesis, cosmos.gov.v1beta1 queries; the
periods end in end block."""

from __future__ import annotations

from typing import Any

from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.gov import genesis, keys, msg_server, query_server
from x.gov.expected_keepers import PackedSigners
from x.gov.keeper import GovKeeper


class GovModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: GovKeeper, packed_signers: PackedSigners) -> None:
        """``packed_signers``: the router's (sdk/baseapp/transactions.py), to check a proposal's messages at
        submission."""
        self.keeper = keeper
        self.packed_signers = packed_signers

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.end_block(ctx)

    def invariants(self) -> dict[str, Invariant]:
        return {"deposits-held": self.keeper.deposits_held}

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper, self.packed_signers)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.routes(self.keeper)
