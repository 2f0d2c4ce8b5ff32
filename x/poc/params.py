"""x/poc's params (``gonka.poc.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.poc.v1 import poc_pb2
from sdk.dec import parse_share

MAX_VOTERS = 100
"""A dispute's voters at most (each re-executes the inference)."""


def default_params() -> poc_pb2.Params:
    """The seeds' 1–10%: 10% for a host with no record, halfway (5.5%) at 100 validated inferences, toward 1%;
    the draw one block after the finish; 20 blocks to validate; a dispute voted by 3 more validators within 20
    blocks, its loser slashed 20%; INVALID after 3 invalidations in a row, or when the sequential test tells an
    invalidation rate of 5% from the honest 0.1% at α = 10⁻⁶ (README, "Host status"). A fresh message each call."""
    return poc_pb2.Params(
        min_validation_rate="0.01",
        max_validation_rate="0.1",
        reputation_scale=100,
        draw_delay_blocks=1,
        validation_window_blocks=20,
        retention_blocks=1000,
        dispute_voters=3,
        dispute_window_blocks=20,
        dispute_slash_fraction="0.2",
        invalid_after=3,
        sprt_p0="0.001",
        sprt_p1="0.05",
        sprt_alpha="0.000001",
    )


def min_rate(params: poc_pb2.Params) -> Fraction:
    return parse_share(params.min_validation_rate, "min_validation_rate")


def max_rate(params: poc_pb2.Params) -> Fraction:
    return parse_share(params.max_validation_rate, "max_validation_rate")


def slash_fraction(params: poc_pb2.Params) -> Fraction:
    return parse_share(params.dispute_slash_fraction, "dispute_slash_fraction")


def sprt(params: poc_pb2.Params) -> tuple[Fraction, Fraction, Fraction]:
    """(p0, p1, α) of the sequential test."""
    return (
        parse_share(params.sprt_p0, "sprt_p0"),
        parse_share(params.sprt_p1, "sprt_p1"),
        parse_share(params.sprt_alpha, "sprt_alpha"),
    )


def validate_params(params: poc_pb2.Params) -> None:
    """Rates decimals in [0, 1], min ≤ max; a positive reputation scale, draw delay, windows and invalid_after;
    a slash fraction in [0, 1]; 0 < p0 < p1 < 1 and 0 < α < 1."""
    if min_rate(params) > max_rate(params):
        raise ValueError("poc param min_validation_rate must not exceed max_validation_rate")
    for name in ("reputation_scale", "draw_delay_blocks", "validation_window_blocks", "dispute_window_blocks",
                 "invalid_after"):  # fmt: skip
        if getattr(params, name) == 0:
            raise ValueError(f"poc param {name} must be positive")
    if params.dispute_voters > MAX_VOTERS:
        raise ValueError(f"poc param dispute_voters must be at most {MAX_VOTERS}")
    slash_fraction(params)
    p0, p1, alpha = sprt(params)
    if not 0 < p0 < p1 < 1:
        raise ValueError("poc params sprt_p0 and sprt_p1 must satisfy 0 < sprt_p0 < sprt_p1 < 1")
    if not 0 < alpha < 1:
        raise ValueError("poc param sprt_alpha must lie strictly between 0 and 1")
