"""x/bank genesis: params, balances, supply and denom metadata, exported in key order."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.bank.v1beta1 import genesis_pb2
from google.protobuf import json_format

from sdk.cli.flags import message_dict
from sdk.coins import coins_from_proto
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidCoins
from x.bank.keeper import BankKeeper
from x.bank.params import validate_params


def default_genesis() -> dict[str, Any]:
    return json_format.MessageToDict(genesis_pb2.GenesisState())


def init_genesis(ctx: Context, keeper: BankKeeper, state: dict[str, Any]) -> None:
    """Balances are credited and the supply is their sum; a stated supply must agree."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    validate_params(genesis.params)
    keeper.set_params(ctx, genesis.params)
    for metadata in genesis.denom_metadata:
        keeper.set_denom_metadata(ctx, metadata)
    for balance in genesis.balances:
        keeper.credit_genesis(ctx, bech32.decode(balance.address), coins_from_proto(balance.coins))
    ctx.events.clear()
    if genesis.supply and coins_from_proto(genesis.supply) != keeper.get_total_supply(ctx):
        raise ErrInvalidCoins.wrap("genesis supply does not equal the sum of balances")


def export_genesis(ctx: Context, keeper: BankKeeper) -> dict[str, Any]:
    """Params, every balance (module accounts' too), the supply and the denom metadata, in key order."""
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            balances=keeper.all_balances(ctx),
            supply=keeper.get_total_supply(ctx).to_proto(),
            denom_metadata=keeper.all_denom_metadata(ctx),
        )
    )
