"""x/poc genesis: the params and, for an exported chain, the validation and host records, imported as they are
(their rules held when the chain accepted them); the queues are rebuilt from the records."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.poc.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from x.poc.invariants import queues_consistent, validators_drawn
from x.poc.keeper import PocKeeper
from x.poc.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: PocKeeper, state: dict[str, Any]) -> None:
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    for record in genesis.validations:
        keeper.set_validation(ctx, record)
    for host in genesis.hosts:
        keeper.set_host(ctx, host)
    error = validators_drawn(keeper, ctx) or queues_consistent(keeper, ctx)
    if error:
        raise ValueError(f"poc genesis: {error}")


def export_genesis(ctx: Context, keeper: PocKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx), validations=keeper.validations(ctx), hosts=keeper.hosts(ctx)
        )
    )
