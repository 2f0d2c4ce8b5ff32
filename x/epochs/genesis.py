"""x/epochs genesis: the schedule and, for an exported chain, the epoch it was in."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.epochs.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from x.epochs import keys
from x.epochs.keeper import EpochsKeeper
from x.epochs.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: EpochsKeeper, state: dict[str, Any]) -> None:
    """``gonka.epochs.v1.GenesisState``: the schedule (default if left out) and, for an exported chain,
    the epoch it was in, which goes on; a new chain's epoch 0 starts at its first block."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    if genesis.HasField("current"):
        validate_params(genesis.current.params)
        keeper.set_current_epoch(ctx, genesis.current)


def export_genesis(ctx: Context, keeper: EpochsKeeper) -> dict[str, Any]:
    genesis = genesis_pb2.GenesisState(params=keeper.get_params(ctx))
    if ctx.kv(keys.STORE_PREFIX).get(keys.CURRENT_EPOCH_KEY) is not None:
        genesis.current.CopyFrom(keeper.current_epoch(ctx))
    return message_dict(genesis)
