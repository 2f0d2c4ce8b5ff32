"""x/bls wired as a module: hosts' BLS12-381 keys (registration, queries, genesis, invariant)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.bls.v1 import bls_pb2, genesis_pb2, tx_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from x.bls import invariants, keys, msg_server
from x.bls.keeper import BlsKeeper
from x.bls.query_server import BlsQueries


class BlsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BlsKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState())

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.bls.v1.GenesisState``: (operator, key) pairs of an exported chain. Every key is checked again
        (KeyValidate) and every operator must be a host (x/stake's genesis runs first); an operator or a key
        may appear once. Proofs are not in the export: each was verified when its key was registered. A new
        chain's keys arrive in gentxs (x/genutil), after this."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        seen: set[bytes] = set()
        for entry in genesis.keys:
            what = f"bls genesis key of {entry.operator!r}"
            try:
                operator = bech32.decode(entry.operator)
                msg_server.check_key(entry.public_key)
                if operator in seen or entry.public_key in seen:
                    raise ValueError("operator or key repeated")
                seen.update((operator, bytes(entry.public_key)))
                self.keeper.set_key(ctx, operator, bytes(entry.public_key))
            except ABCIError as err:
                raise ValueError(f"{what}: {err.log}") from None
            except ValueError as err:
                raise ValueError(f"{what}: {err}") from None

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(keys=[
            bls_pb2.BlsKey(operator=bech32.encode(op), public_key=pk) for op, pk in self.keeper.all_keys(ctx)]))

    def invariants(self) -> dict[str, Invariant]:
        return {"indexes-agree": lambda ctx: invariants.indexes_agree(self.keeper, ctx)}

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgRegisterBlsKey): MsgRoute(
                tx_pb2.MsgRegisterBlsKey, msg_server.operator_signers, msg_server.validate_register,
                lambda ctx, msg: msg_server.handle_register(ctx, k, msg),
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return BlsQueries(self.keeper).routes()
