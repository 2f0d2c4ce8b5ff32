"""x/pool messages: anyone funds the pool (``MsgFundCommunityPool``); the authority spends from it
(``MsgCommunityPoolSpend``) and changes its params (``MsgUpdateParams``)."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx

from protogen.gonka.pool.v1 import tx_pb2
from sdk.address import parse_address
from sdk.coins import Coins, coins_from_proto
from sdk.context import Context
from sdk.errors import ErrInvalidCoins
from sdk.module import MsgRoute, type_url
from sdk.params import check_authority, update_params_route
from x.pool import keys
from x.pool.keeper import PoolKeeper
from x.pool.params import validate_params


def positive_coins(coins: Any, what: str) -> Coins:
    """Valid, non-empty coins (``sdk/10`` otherwise)."""
    parsed = coins_from_proto(coins)
    if not parsed:
        raise ErrInvalidCoins.wrap(f"{what} must not be empty")
    return parsed


def validate_fund(msg: distribution_tx.MsgFundCommunityPool) -> None:
    parse_address(msg.depositor, "depositor")
    positive_coins(msg.amount, "amount")


def validate_spend(msg: distribution_tx.MsgCommunityPoolSpend) -> None:
    parse_address(msg.authority, "authority")
    parse_address(msg.recipient, "recipient")
    positive_coins(msg.amount, "amount")


def handle_fund(
    ctx: Context, pool: PoolKeeper, msg: distribution_tx.MsgFundCommunityPool
) -> distribution_tx.MsgFundCommunityPoolResponse:
    pool.fund(ctx, parse_address(msg.depositor, "depositor"), positive_coins(msg.amount, "amount"), keys.SOURCE_FUND)
    return distribution_tx.MsgFundCommunityPoolResponse()


def handle_spend(
    ctx: Context, pool: PoolKeeper, msg: distribution_tx.MsgCommunityPoolSpend
) -> distribution_tx.MsgCommunityPoolSpendResponse:
    check_authority(pool.authority, msg.authority)
    pool.spend(ctx, parse_address(msg.recipient, "recipient"), positive_coins(msg.amount, "amount"))
    return distribution_tx.MsgCommunityPoolSpendResponse()


def routes(pool: PoolKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(distribution_tx.MsgFundCommunityPool): MsgRoute(
            distribution_tx.MsgFundCommunityPool,
            lambda msg: [parse_address(msg.depositor, "depositor")],
            validate_fund,
            lambda ctx, msg: handle_fund(ctx, pool, msg),
        ),
        type_url(distribution_tx.MsgCommunityPoolSpend): MsgRoute(
            distribution_tx.MsgCommunityPoolSpend,
            lambda msg: [parse_address(msg.authority, "authority")],
            validate_spend,
            lambda ctx, msg: handle_spend(ctx, pool, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, pool.authority, validate_params, pool.set_params
        ),
    }
