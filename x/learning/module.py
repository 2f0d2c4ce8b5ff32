"""x/learning wired as a module: genesis, message routes and query routes."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.learning.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.module import BaseModule, MsgRoute, QueryRoute
from x.learning import genesis, keys, msg_server, query_server
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

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
