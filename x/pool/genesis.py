"""x/pool genesis: the params and an exported chain's inflow and spend totals, which the pool account must hold."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.pool.v1 import genesis_pb2, pool_pb2
from sdk.cli.flags import message_dict
from sdk.coins import coins_from_proto
from sdk.context import Context
from x.pool.keeper import PoolKeeper
from x.pool.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: PoolKeeper, state: dict[str, Any]) -> None:
    """``gonka.pool.v1.GenesisState``: the params (default if left out) and an exported chain's totals;
    bank's genesis (imported before) must hold exactly inflows − spent in the ``pool`` account."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    for total in genesis.inflows:
        keeper.set_inflow(ctx, total.source, coins_from_proto(total.amount))
    keeper.set_spent(ctx, coins_from_proto(genesis.spent))
    error = keeper.balance_accounted(ctx)
    if error:
        raise ValueError(f"pool genesis: {error}")


def export_genesis(ctx: Context, keeper: PoolKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            inflows=[pool_pb2.SourceTotal(source=s, amount=c.to_proto()) for s, c in keeper.inflows(ctx).items()],
            spent=keeper.spent(ctx).to_proto(),
        )
    )
