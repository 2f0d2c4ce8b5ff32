"""x/bls genesis: params and an exported chain's (operator, key) pairs, each checked again."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.bls.v1 import bls_pb2, genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from x.bls import msg_server
from x.bls.keeper import BlsKeeper
from x.bls.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: BlsKeeper, state: dict[str, Any]) -> None:
    """``gonka.bls.v1.GenesisState``: params (default if left out) and (operator, key) pairs of an exported
    chain. Every key is checked again (KeyValidate) and every operator must be a host (x/stake's genesis
    runs first); an operator or a key may appear once. Proofs are not in the export: each was verified
    when its key was registered. A new chain's keys arrive in gentxs (x/genutil), after this."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    seen: set[bytes] = set()
    for entry in genesis.keys:
        what = f"bls genesis key of {entry.operator!r}"
        try:
            operator = bech32.decode(entry.operator)
            msg_server.check_key(entry.public_key)
            if operator in seen or entry.public_key in seen:
                raise ValueError("operator or key repeated")
            seen.update((operator, bytes(entry.public_key)))
            keeper.set_key(ctx, operator, bytes(entry.public_key))
        except ABCIError as err:
            raise ValueError(f"{what}: {err.log}") from None
        except ValueError as err:
            raise ValueError(f"{what}: {err}") from None


def export_genesis(ctx: Context, keeper: BlsKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            keys=[bls_pb2.BlsKey(operator=bech32.encode(op), public_key=pk) for op, pk in keeper.all_keys(ctx)],
            params=keeper.get_params(ctx),
        )
    )
