"""``gonkad query auth …`` and ``gonkad tx auth update-params``."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2, tx_pb2

from sdk.cli.flags import add_query_flags, checked_address, print_output, shown_dict
from sdk.cli.params import add_update_params_command
from sdk.client.querier import Querier
from sdk.services import cosmos


def cmd_account(args: argparse.Namespace) -> None:
    query = cosmos("auth").query
    reply = Querier(args.node, args.grpc_addr).query(
        query + "Account",
        query_pb2.QueryAccountRequest(address=checked_address(args.address)),
        query_pb2.QueryAccountResponse,
    )
    print_output(args.output, shown_dict(reply))


def register_query(modules: argparse._SubParsersAction) -> None:
    auth = modules.add_parser("auth", help="accounts").add_subparsers(dest="auth_command", required=True)
    p = auth.add_parser("account", help="an account's number, sequence and public key")
    p.add_argument("address")
    add_query_flags(p)
    p.set_defaults(func=cmd_account)


def register_tx(modules: argparse._SubParsersAction) -> None:
    auth = modules.add_parser("auth", help="auth params").add_subparsers(dest="auth_command", required=True)
    add_update_params_command(auth, tx_pb2.MsgUpdateParams)
