"""x/rewards' params (``gonka.rewards.v1.Params``): defaults and rules."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.rewards.v1 import rewards_pb2
from sdk.coins import DENOM_RE, parse_amount
from sdk.dec import parse_dec, parse_share
from sdk.errors import ABCIError

GNK = 10**9


def default_params() -> rewards_pb2.Params:
    """The real network's: 323,000 GNK in epoch 1, decaying by exp(−0.000475) an epoch, at most 680,000,000
    GNK ever minted; a tenth of every epoch's rewards to the community pool. A fresh message each call."""
    return rewards_pb2.Params(
        initial_epoch_reward=str(323_000 * GNK),
        decay_rate="0.000475",
        issuance_cap=str(680_000_000 * GNK),
        community_pool_share="0.1",
        mint_denom="ngonka",
    )


def amount(params: rewards_pb2.Params, field: str) -> int:
    try:
        return parse_amount(getattr(params, field), field)
    except ABCIError as err:
        raise ValueError(f"rewards param {err.log}") from None


def decay(params: rewards_pb2.Params) -> Fraction:
    return parse_dec(params.decay_rate, "decay_rate")


def pool_share(params: rewards_pb2.Params) -> Fraction:
    return parse_share(params.community_pool_share, "community_pool_share")


def validate_params(params: rewards_pb2.Params) -> None:
    """Amounts as integer text (the initial reward at most 10^30, the bound of the issuance's error
    analysis), the decay a decimal, the pool share in [0, 1], a valid denom."""
    if amount(params, "initial_epoch_reward") > 10**30:
        raise ValueError("rewards param initial_epoch_reward must be at most 10^30")
    amount(params, "issuance_cap")
    decay(params)
    pool_share(params)
    if not DENOM_RE.match(params.mint_denom):
        raise ValueError(f"rewards param mint_denom {params.mint_denom!r} is not a valid denom")
