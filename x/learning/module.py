"""x/learning wired as a module: genesis, message routes and query routes."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from sdk.context import Context
from sdk.cli.flags import message_dict
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from protogen.gonka.learning.v1 import genesis_pb2, tx_pb2
from x.learning import genesis, keys, msg_server
from x.learning.keeper import LearningKeeper
from x.learning.query_server import QueryServer
from x.learning.validate import validate_checkpoint, validate_run, validate_verdict


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
        k = self.keeper
        return {
            type_url(tx_pb2.MsgCreateTrainingRun): MsgRoute(
                tx_pb2.MsgCreateTrainingRun, msg_server.signers, validate_run,
                lambda ctx, msg: msg_server.handle_create_run(ctx, k, msg),
            ),
            type_url(tx_pb2.MsgCommitCheckpoint): MsgRoute(
                tx_pb2.MsgCommitCheckpoint, msg_server.signers, validate_checkpoint,
                lambda ctx, msg: msg_server.handle_commit_checkpoint(ctx, k, msg),
            ),
            type_url(tx_pb2.MsgSubmitVerdict): MsgRoute(
                tx_pb2.MsgSubmitVerdict, msg_server.signers, validate_verdict,
                lambda ctx, msg: msg_server.handle_submit_verdict(ctx, k, msg),
            ),
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, genesis.validate_params, k.set_params
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return QueryServer(self.keeper).routes()
