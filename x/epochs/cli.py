"""``gonkad query epochs current|params`` and ``gonkad tx epochs update-params``."""

from __future__ import annotations

import argparse

from protogen.gonka.epochs.v1 import query_pb2, tx_pb2
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.services import gonka


def register_tx(modules: argparse._SubParsersAction) -> None:
    epochs = modules.add_parser("epochs", help="epoch schedule").add_subparsers(dest="epochs_command", required=True)
    add_update_params_command(epochs, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    epochs = modules.add_parser("epochs", help="epochs and stages").add_subparsers(dest="epochs_command", required=True)
    query = gonka("epochs").query
    add_module_query(
        epochs,
        "current",
        "the current epoch, its stage and the next boundaries",
        query + "CurrentEpoch",
        query_pb2.QueryCurrentEpochRequest,
        query_pb2.QueryCurrentEpochResponse,
    )
    add_module_query(
        epochs,
        "params",
        "the epoch schedule",
        query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
