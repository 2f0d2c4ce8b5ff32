"""``gonkad tx rewards update-params`` and ``gonkad query rewards next|host ADDRESS|params|minted``."""

from __future__ import annotations

import argparse

from protogen.gonka.rewards.v1 import query_pb2, tx_pb2
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.services import gonka


def register_tx(modules: argparse._SubParsersAction) -> None:
    rewards = modules.add_parser("rewards", help="epoch rewards").add_subparsers(dest="rewards_command", required=True)
    add_update_params_command(rewards, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    query = gonka("rewards").query
    rewards = modules.add_parser("rewards", help="issuance and host rewards").add_subparsers(
        dest="rewards_command", required=True
    )
    add_module_query(
        rewards,
        "next",
        "what the end of the current epoch mints",
        query + "NextIssuance",
        query_pb2.QueryNextIssuanceRequest,
        query_pb2.QueryNextIssuanceResponse,
    )
    add_module_query(
        rewards,
        "host",
        "a host's rewards: total, still vesting, vested",
        query + "HostRewards",
        query_pb2.QueryHostRewardsRequest,
        query_pb2.QueryHostRewardsResponse,
        ["host"],
    )
    add_module_query(
        rewards,
        "params",
        "the rewards params",
        query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
    add_module_query(
        rewards,
        "minted",
        "minted so far and the cap",
        query + "Minted",
        query_pb2.QueryMintedRequest,
        query_pb2.QueryMintedResponse,
    )
