"""x/learning wired as a module: genesis, message routes, query routes, invariants, and the end block that
settles the checkpoints due (verification.py)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.learning.v1 import genesis_pb2
from sdk.abci.blocks import BlockInfo
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.learning import genesis, invariants, keys, msg_server, query_server, verification
from x.learning.keeper import LearningKeeper


class LearningModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: LearningKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis.default_genesis())

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, json_format.ParseDict(state, genesis_pb2.GenesisState()))

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return message_dict(genesis.export_genesis(ctx, self.keeper))

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        verification.end_block(self.keeper, ctx)

    def invariants(self) -> dict[str, Invariant]:
        return {
            "escrow-held": lambda ctx: invariants.escrow_held(self.keeper, ctx),
            "pending-indexed": lambda ctx: invariants.pending_indexed(self.keeper, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
