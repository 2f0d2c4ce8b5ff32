"""x/slashing genesis: the params and an exported chain's signing records and missed blocks."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.slashing.v1beta1 import genesis_pb2 as cosmos_genesis
from google.protobuf import json_format

from protogen.gonka.slashing.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from x.slashing import keys
from x.slashing.keeper import SlashingKeeper
from x.slashing.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: SlashingKeeper, state: dict[str, Any]) -> None:
    """``gonka.slashing.v1.GenesisState``: the params (default if left out), and an exported chain's
    signing records and missed blocks."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    for entry in genesis.signing_infos:
        keeper.set_signing_info(ctx, keys.consensus_address_of(entry.address), entry.validator_signing_info)
    for entry in genesis.missed_blocks:
        address = keys.consensus_address_of(entry.address)
        for block in entry.missed_blocks:
            if not 0 <= block.index < params.signed_blocks_window:
                raise ValueError(f"slashing genesis: missed block index {block.index} outside the window")
            keeper.set_missed(ctx, address, block.index, block.missed)


def export_genesis(ctx: Context, keeper: SlashingKeeper) -> dict[str, Any]:
    genesis = genesis_pb2.GenesisState(params=keeper.get_params(ctx))
    for address, info in keeper.signing_infos(ctx):
        text = bech32.encode(address, bech32.VALCONS_PREFIX)
        genesis.signing_infos.add(address=text, validator_signing_info=info)
        missed = keeper.missed_indices(ctx, address)
        if missed:
            genesis.missed_blocks.add(
                address=text, missed_blocks=[cosmos_genesis.MissedBlock(index=i, missed=True) for i in missed]
            )
    return message_dict(genesis)
