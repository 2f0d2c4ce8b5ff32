"""``gonkad tx stake update-params``."""

from __future__ import annotations

import argparse

from protogen.gonka.stake.v1 import tx_pb2
from sdk.cli.params import add_update_params_command


def register_tx(modules: argparse._SubParsersAction) -> None:
    stake = modules.add_parser("stake", help="stake params").add_subparsers(dest="stake_command", required=True)
    add_update_params_command(stake, tx_pb2.MsgUpdateParams)
