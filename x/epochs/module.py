"""x/epochs wired as a module: the epoch moves on in begin block, before every other module's."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.epochs.v1 import genesis_pb2, query_pb2, tx_pb2
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.epochs import keys, schedule
from x.epochs.keeper import EpochsKeeper
from x.epochs.params import default_params, validate_params

QUERY = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


class EpochsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: EpochsKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.epochs.v1.GenesisState``: the schedule (default if left out) and, for an exported chain,
        the epoch it was in, which goes on; a new chain's epoch 0 starts at its first block."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        self.keeper.set_params(ctx, params)
        if genesis.HasField("current"):
            validate_params(genesis.current.params)
            self.keeper.set_current_epoch(ctx, genesis.current)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        genesis = genesis_pb2.GenesisState(params=self.keeper.get_params(ctx))
        if ctx.kv(keys.STORE_PREFIX).get(keys.CURRENT_EPOCH_KEY) is not None:
            genesis.current.CopyFrom(self.keeper.current_epoch(ctx))
        return message_dict(genesis)

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.begin_block(ctx)

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params)}

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            QUERY + "CurrentEpoch": QueryRoute(
                query_pb2.QueryCurrentEpochRequest, self.query_current_epoch, bounded=True),
        }

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_current_epoch(
        self, ctx: Context, req: query_pb2.QueryCurrentEpochRequest
    ) -> query_pb2.QueryCurrentEpochResponse:
        """The last committed block's epoch and stage, and the heights where the next stage and epoch begin."""
        height = ctx.header.height
        epoch = self.keeper.current_epoch(ctx)
        stage, stage_height = schedule.next_stage(epoch, height)
        return query_pb2.QueryCurrentEpochResponse(
            height=height, epoch=epoch, stage=schedule.stage_at(epoch, max(height, epoch.start_height)),
            next_stage=stage, next_stage_height=stage_height, next_epoch_height=schedule.next_epoch_height(epoch),
        )
