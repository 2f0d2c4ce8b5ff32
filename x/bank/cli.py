"""``gonkad tx bank …`` and ``gonkad query bank …``."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2, tx_pb2

from sdk.cli.flags import add_query_flags, add_tx_flags, checked_address, print_output, shown_dict
from sdk.cli.params import add_update_params_command
from sdk.cli.tx import broadcast_messages
from sdk.client.querier import Querier
from sdk.client.txbuilder import send_msg
from sdk.coins import parse_coins
from sdk.services import cosmos


def cmd_send(args: argparse.Namespace) -> None:
    recipient = checked_address(args.to_address)
    broadcast_messages(args, lambda sender: [send_msg(sender, recipient, parse_coins(args.amount))])


def cmd_balances(args: argparse.Namespace) -> None:
    query = cosmos("bank").query
    querier = Querier(args.node, args.grpc_addr)
    address = checked_address(args.address)
    if args.denom:
        reply = querier.query(
            query + "Balance",
            query_pb2.QueryBalanceRequest(address=address, denom=args.denom),
            query_pb2.QueryBalanceResponse,
        )
    else:
        reply = querier.query(
            query + "AllBalances",
            query_pb2.QueryAllBalancesRequest(address=address),
            query_pb2.QueryAllBalancesResponse,
        )
    print_output(args.output, shown_dict(reply))


def cmd_total(args: argparse.Namespace) -> None:
    query = cosmos("bank").query
    reply = Querier(args.node, args.grpc_addr).query(
        query + "TotalSupply", query_pb2.QueryTotalSupplyRequest(), query_pb2.QueryTotalSupplyResponse
    )
    print_output(args.output, shown_dict(reply))


def register_tx(modules: argparse._SubParsersAction) -> None:
    bank = modules.add_parser("bank", help="send tokens").add_subparsers(dest="bank_command", required=True)
    p = bank.add_parser("send", help="send coins: send FROM_KEY_OR_ADDRESS TO_ADDRESS AMOUNT")
    p.add_argument("from_", metavar="from_key_or_address")
    p.add_argument("to_address")
    p.add_argument("amount", help="e.g. 1000ngonka")
    add_tx_flags(p, with_from=False)
    p.set_defaults(func=cmd_send)
    add_update_params_command(bank, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    bank = modules.add_parser("bank", help="balances and supply").add_subparsers(dest="bank_command", required=True)
    p = bank.add_parser("balances", help="all balances of an address")
    p.add_argument("address")
    p.add_argument("--denom", default="")
    add_query_flags(p)
    p.set_defaults(func=cmd_balances)
    p = bank.add_parser("total", help="total supply")
    add_query_flags(p)
    p.set_defaults(func=cmd_total)
