"""``gonkad query vesting …`` and ``gonkad tx vesting update-params``."""

from __future__ import annotations

import argparse

from protogen.gonka.vesting.v1 import query_pb2, tx_pb2
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.services import gonka


def register_tx(modules: argparse._SubParsersAction) -> None:
    vesting = modules.add_parser("vesting", help="vesting params").add_subparsers(dest="vesting_command", required=True)
    add_update_params_command(vesting, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    query = gonka("vesting").query
    vesting = modules.add_parser("vesting", help="vesting schedules and locked coins").add_subparsers(
        dest="vesting_command", required=True
    )
    add_module_query(
        vesting,
        "schedule",
        "an account's pending vesting parts, totals and lock by time",
        query + "Schedule",
        query_pb2.QueryScheduleRequest,
        query_pb2.QueryScheduleResponse,
        ["address"],
    )
    add_module_query(
        vesting,
        "locked",
        "an account's locked and vesting coins",
        query + "Locked",
        query_pb2.QueryLockedRequest,
        query_pb2.QueryLockedResponse,
        ["address"],
    )
    add_module_query(
        vesting,
        "params",
        "the vesting params",
        query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
