"""``gonkad tx stake …`` and ``gonkad query stake …``."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from google.protobuf.message import Message

from protogen.gonka.stake.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.coins import parse_coins
from sdk.services import cosmos, gonka


def one_coin(text: str) -> coin_pb2.Coin:
    coins = parse_coins(text)
    if len(coins) != 1:
        raise ValueError(f"expected one amount such as 1000ngonka, got {text!r}")
    ((denom, amount),) = coins
    return coin_pb2.Coin(denom=denom, amount=str(amount))


def cmd_deposit(args: argparse.Namespace) -> None:
    amount = one_coin(args.amount)
    broadcast_messages(args, lambda operator: [tx_pb2.MsgDepositCollateral(operator=operator, amount=amount)])


def cmd_withdraw(args: argparse.Namespace) -> None:
    amount = one_coin(args.amount)
    broadcast_messages(args, lambda operator: [tx_pb2.MsgWithdrawCollateral(operator=operator, amount=amount)])


def cmd_edit_host(args: argparse.Namespace) -> None:
    description = staking_pb2.Description(moniker=args.moniker, website=args.website, details=args.details)
    broadcast_messages(
        args,
        lambda operator: [
            tx_pb2.MsgEditHost(operator=operator, description=description, inference_url=args.inference_url)
        ],
    )


ValidatorMessages = Callable[[argparse.Namespace], Callable[[str], list[Message]]]
"""``create-validator``'s messages: given the command's arguments (amount, moniker, home, key_home, no_bls_key) it
reads the node's key files and returns the builder of the messages for the signer's address. The binary passes
it in (gonkad/cmd/genesis.py: x/genutil's MsgCreateValidator, as gentxs carry it, then x/bls's key
registration), since x/stake imports no other module."""


def cmd_create_validator(args: argparse.Namespace) -> None:
    build = args.validator_messages(args)  # the key files first: a missing one fails before keyring or node
    broadcast_messages(args, build)


def register_tx(modules: argparse._SubParsersAction, validator_messages: ValidatorMessages | None = None) -> None:
    """``validator_messages``: adds ``create-validator`` (see ValidatorMessages)."""
    stake = modules.add_parser("stake", help="hosts and collateral").add_subparsers(dest="stake_command", required=True)
    for name, func, text in (
        ("deposit", cmd_deposit, "bond more collateral: deposit AMOUNT"),
        ("withdraw", cmd_withdraw, "start unbonding collateral: withdraw AMOUNT"),
    ):
        p = stake.add_parser(name, help=text)
        p.add_argument("amount", help="e.g. 1000000000ngonka")
        add_tx_flags(p)
        p.set_defaults(func=func)
    p = stake.add_parser("edit-host", help="replace the host's description and inference URL")
    p.add_argument("--moniker", required=True)
    p.add_argument("--website", default="")
    p.add_argument("--details", default="")
    p.add_argument("--inference-url", default="")
    add_tx_flags(p)
    p.set_defaults(func=cmd_edit_host)
    if validator_messages is not None:
        p = stake.add_parser(
            "create-validator",
            help="become a host after genesis: MsgCreateValidator with the node's "
            "consensus key, then MsgRegisterBlsKey with its BLS key, in one tx signed by --from",
        )
        p.add_argument("amount", help="the collateral to bond, e.g. 100000000000000ngonka")
        p.add_argument("--moniker", required=True)
        p.add_argument(
            "--key-home",
            default="",
            help="the node's home, for config/priv_validator_key.json and "
            "config/bls_key.json (default: --home, which also holds the keyring)",
        )
        p.add_argument("--no-bls-key", action="store_true", help="do not register the node's BLS key in the tx")
        add_tx_flags(p)
        p.set_defaults(func=cmd_create_validator, validator_messages=validator_messages)
    add_update_params_command(stake, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    stake = modules.add_parser("stake", help="hosts, validators, collateral, weights").add_subparsers(
        dest="stake_command", required=True
    )
    _add_validator_queries(stake)
    add_module_query(
        stake,
        "params",
        "the stake params",
        gonka("stake").query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
    _add_host_queries(stake)
    _add_weight_queries(stake)


def _add_validator_queries(stake: argparse._SubParsersAction) -> None:
    """The Cosmos staking queries: every host seen as a validator."""
    cosmos_prefix = cosmos("staking").query
    add_module_query(
        stake,
        "validators",
        "every host as a Cosmos validator",
        cosmos_prefix + "Validators",
        cosmos_query.QueryValidatorsRequest,
        cosmos_query.QueryValidatorsResponse,
    )
    add_module_query(
        stake,
        "validator",
        "one validator by its gonkavaloper address",
        cosmos_prefix + "Validator",
        cosmos_query.QueryValidatorRequest,
        cosmos_query.QueryValidatorResponse,
        ["validator_addr"],
    )
    add_module_query(
        stake,
        "pool",
        "bonded and unbonding collateral",
        cosmos_prefix + "Pool",
        cosmos_query.QueryPoolRequest,
        cosmos_query.QueryPoolResponse,
    )


def _add_host_queries(stake: argparse._SubParsersAction) -> None:
    """The hosts and their collateral."""
    gonka_prefix = gonka("stake").query
    add_module_query(
        stake, "hosts", "every host", gonka_prefix + "Hosts", query_pb2.QueryHostsRequest, query_pb2.QueryHostsResponse
    )
    add_module_query(
        stake,
        "host",
        "one host by its operator address",
        gonka_prefix + "Host",
        query_pb2.QueryHostRequest,
        query_pb2.QueryHostResponse,
        ["operator"],
    )
    add_module_query(
        stake,
        "collateral",
        "a host's bonded and unbonding collateral",
        gonka_prefix + "Collateral",
        query_pb2.QueryCollateralRequest,
        query_pb2.QueryCollateralResponse,
        ["operator"],
    )
    add_module_query(
        stake,
        "unbonding",
        "a host's unbonding entries",
        gonka_prefix + "UnbondingEntries",
        query_pb2.QueryUnbondingEntriesRequest,
        query_pb2.QueryUnbondingEntriesResponse,
        ["operator"],
    )


def _add_weight_queries(stake: argparse._SubParsersAction) -> None:
    """The weights of an epoch and the validator set they give."""
    gonka_prefix = gonka("stake").query
    add_module_query(
        stake,
        "weights",
        "the weights recorded for an epoch",
        gonka_prefix + "EpochWeights",
        query_pb2.QueryEpochWeightsRequest,
        query_pb2.QueryEpochWeightsResponse,
        ["epoch"],
    )
    add_module_query(
        stake,
        "powers",
        "the validator set in force",
        gonka_prefix + "ValidatorPowers",
        query_pb2.QueryValidatorPowersRequest,
        query_pb2.QueryValidatorPowersResponse,
    )
