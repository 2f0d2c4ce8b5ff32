"""``gonkad tx slashing unjail`` and ``gonkad query slashing signing-info|signing-infos|params``."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as cosmos_tx

from protogen.gonka.slashing.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.crypto import bech32
from sdk.services import cosmos, gonka


def cmd_unjail(args: argparse.Namespace) -> None:
    broadcast_messages(
        args,
        lambda operator: [
            cosmos_tx.MsgUnjail(validator_addr=bech32.encode(bech32.decode(operator), bech32.VALOPER_PREFIX))
        ],
    )


def register_tx(modules: argparse._SubParsersAction) -> None:
    slashing = modules.add_parser("slashing", help="unjail").add_subparsers(dest="slashing_command", required=True)
    p = slashing.add_parser("unjail", help="unjail the --from host after its jail time")
    add_tx_flags(p)
    p.set_defaults(func=cmd_unjail)
    add_update_params_command(slashing, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    cosmos_prefix = cosmos("slashing").query
    gonka_prefix = gonka("slashing").query
    slashing = modules.add_parser("slashing", help="signing records and params").add_subparsers(
        dest="slashing_command", required=True
    )
    add_module_query(
        slashing,
        "signing-info",
        "a validator's signing record by its gonkavalcons address",
        cosmos_prefix + "SigningInfo",
        cosmos_query.QuerySigningInfoRequest,
        cosmos_query.QuerySigningInfoResponse,
        ["cons_address"],
    )
    add_module_query(
        slashing,
        "signing-infos",
        "every validator's signing record",
        cosmos_prefix + "SigningInfos",
        cosmos_query.QuerySigningInfosRequest,
        cosmos_query.QuerySigningInfosResponse,
    )
    add_module_query(
        slashing,
        "params",
        "the slashing params",
        gonka_prefix + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
