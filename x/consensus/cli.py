"""``gonkad tx consensus update-params``: the JSON holds ``block``, ``evidence``, ``validator`` (and ``abci``)."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.consensus.v1 import tx_pb2

from sdk.cli.params import add_update_params_command


def register_tx(modules: argparse._SubParsersAction) -> None:
    consensus = modules.add_parser("consensus", help="CometBFT's consensus params").add_subparsers(
        dest="consensus_command", required=True
    )
    add_update_params_command(consensus, tx_pb2.MsgUpdateParams)
