"""x/stake's params (``gonka.stake.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.stake.v1 import stake_pb2
from sdk.coins import DENOM_RE
from sdk.dec import parse_share


def default_params() -> stake_pb2.Params:
    """The real network's rules: one unit of weight per GNK (10^9 ngonka) of collateral, 20% of weight
    free of collateral, at most 25% of the power per host, 100 validators; collateral unbonds over one
    epoch. A fresh message each call: callers may change it."""
    return stake_pb2.Params(
        bond_denom="ngonka",
        power_reduction=10**9,
        max_moniker_length=70,
        unbonding_epochs=1,
        free_weight_share="0.2",
        collateral_per_weight=10**9,
        max_power_share="0.25",
        max_validators=100,
    )


def free_weight_share(params: stake_pb2.Params) -> Fraction:
    return parse_share(params.free_weight_share, "free_weight_share")


def max_power_share(params: stake_pb2.Params) -> Fraction:
    return parse_share(params.max_power_share, "max_power_share", allow_zero=False)


def validate_params(params: stake_pb2.Params) -> None:
    """A valid bond denom; positive power reduction, moniker length, collateral per weight and validator
    count (zero would divide by zero or forbid every host); the shares decimals in range."""
    if not DENOM_RE.match(params.bond_denom):
        raise ValueError(f"stake param bond_denom {params.bond_denom!r} is not a valid denom")
    for field in ("power_reduction", "max_moniker_length", "collateral_per_weight", "max_validators"):
        if getattr(params, field) == 0:
            raise ValueError(f"stake param {field} must be positive")
    free_weight_share(params)
    max_power_share(params)
