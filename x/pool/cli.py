"""``gonkad tx pool fund|update-params`` and ``gonkad query pool [params|totals]`` (plain ``query pool``: the
community pool's balance)."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx

from protogen.gonka.pool.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.coins import parse_coins
from sdk.services import cosmos, gonka


def cmd_fund(args: argparse.Namespace) -> None:
    coins = parse_coins(args.amount)
    broadcast_messages(
        args, lambda depositor: [distribution_tx.MsgFundCommunityPool(depositor=depositor, amount=coins.to_proto())]
    )


def register_tx(modules: argparse._SubParsersAction) -> None:
    pool = modules.add_parser("pool", help="the community pool").add_subparsers(dest="pool_command", required=True)
    p = pool.add_parser("fund", help="pay into the community pool: fund AMOUNT")
    p.add_argument("amount", help="e.g. 1000000000ngonka")
    add_tx_flags(p)
    p.set_defaults(func=cmd_fund)
    add_update_params_command(pool, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    """``query pool`` alone prints the balance (``cosmos.distribution.v1beta1.Query/CommunityPool``)."""
    cosmos_prefix = cosmos("distribution").query
    gonka_prefix = gonka("pool").query
    balance = add_module_query(
        modules,
        "pool",
        "the community pool's balance (params, totals: subcommands)",
        cosmos_prefix + "CommunityPool",
        distribution_query.QueryCommunityPoolRequest,
        distribution_query.QueryCommunityPoolResponse,
    )
    sub = balance.add_subparsers(dest="pool_command", required=False)
    add_module_query(
        sub,
        "params",
        "the pool params",
        gonka_prefix + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
    add_module_query(
        sub,
        "totals",
        "the balance, inflows by source and spends",
        gonka_prefix + "Totals",
        query_pb2.QueryTotalsRequest,
        query_pb2.QueryTotalsResponse,
    )
