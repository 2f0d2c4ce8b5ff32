"""x/slashing's params (``gonka.slashing.v1.Params``): defaults, rules, and the Cosmos shape."""

from __future__ import annotations

from fractions import Fraction

from cosmpy.protos.cosmos.slashing.v1beta1 import slashing_pb2
from google.protobuf.duration_pb2 import Duration

from protogen.gonka.slashing.v1 import slashing_pb2 as gonka_slashing
from sdk.dec import legacy_dec_bytes, parse_share


def default_params() -> gonka_slashing.Params:
    """The real network's: sign at least half of every 100 blocks or lose 1% and sit out 600 s; a double
    signer loses 5% and is tombstoned. A fresh message each call: callers may change it."""
    return gonka_slashing.Params(
        signed_blocks_window=100,
        min_signed_per_window="0.5",
        downtime_jail_seconds=600,
        slash_fraction_double_sign="0.05",
        slash_fraction_downtime="0.01",
    )


def fraction(params: gonka_slashing.Params, field: str) -> Fraction:
    return parse_share(getattr(params, field), field)


def validate_params(params: gonka_slashing.Params) -> None:
    """A positive window; the three decimals in [0, 1]."""
    if params.signed_blocks_window <= 0:
        raise ValueError("slashing param signed_blocks_window must be positive")
    for field in ("min_signed_per_window", "slash_fraction_double_sign", "slash_fraction_downtime"):
        fraction(params, field)


def cosmos_params(params: gonka_slashing.Params) -> slashing_pb2.Params:
    """The params as ``cosmos.slashing.v1beta1.Params`` (decimals as the SDK's LegacyDec bytes)."""
    return slashing_pb2.Params(
        signed_blocks_window=params.signed_blocks_window,
        min_signed_per_window=legacy_dec_bytes(fraction(params, "min_signed_per_window")),
        downtime_jail_duration=Duration(seconds=params.downtime_jail_seconds),
        slash_fraction_double_sign=legacy_dec_bytes(fraction(params, "slash_fraction_double_sign")),
        slash_fraction_downtime=legacy_dec_bytes(fraction(params, "slash_fraction_downtime")),
    )
