"""x/poc's params (``gonka.poc.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.poc.v1 import poc_pb2
from sdk.dec import parse_share


def default_params() -> poc_pb2.Params:
    """The seeds' 1–10%: 10% for a host with no record, halfway (5.5%) at 100 validated inferences, toward 1%;
    the draw one block after the finish; 20 blocks to validate. A fresh message each call."""
    return poc_pb2.Params(
        min_validation_rate="0.01",
        max_validation_rate="0.1",
        reputation_scale=100,
        draw_delay_blocks=1,
        validation_window_blocks=20,
        retention_blocks=1000,
    )


def min_rate(params: poc_pb2.Params) -> Fraction:
    return parse_share(params.min_validation_rate, "min_validation_rate")


def max_rate(params: poc_pb2.Params) -> Fraction:
    return parse_share(params.max_validation_rate, "max_validation_rate")


def validate_params(params: poc_pb2.Params) -> None:
    """Rates decimals in [0, 1], min ≤ max; a positive reputation scale, draw delay and window."""
    if min_rate(params) > max_rate(params):
        raise ValueError("poc param min_validation_rate must not exceed max_validation_rate")
    for name in ("reputation_scale", "draw_delay_blocks", "validation_window_blocks"):
        if getattr(params, name) == 0:
            raise ValueError(f"poc param {name} must be positive")
