"""x/stake's params (``gonka.stake.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from protogen.gonka.stake.v1 import stake_pb2
from sdk.coins import DENOM_RE


def default_params() -> stake_pb2.Params:
    """One unit of CometBFT voting power per GNK (10^9 ngonka) of collateral; monikers as the SDK bounds
    them. A fresh message each call: callers may change it."""
    return stake_pb2.Params(bond_denom="ngonka", power_reduction=10**9, max_moniker_length=70)


def validate_params(params: stake_pb2.Params) -> None:
    """A bond denom must be a valid denom; a zero power reduction would divide by zero and a zero moniker
    length would forbid every validator."""
    if not DENOM_RE.match(params.bond_denom):
        raise ValueError(f"stake param bond_denom {params.bond_denom!r} is not a valid denom")
    for field in ("power_reduction", "max_moniker_length"):
        if getattr(params, field) == 0:
            raise ValueError(f"stake param {field} must be positive")
