"""x/sprint's params (``gonka.sprint.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.dec import parse_share

DEFAULT_RACE_PARAMS_HASH = bytes.fromhex("b372d4180503bf51dd89fc4cdf7fcdbdc2207cf8a102a50ef6fc9b0a4ef0085a")
"""SHA-256 of the ML node's "default" race preset (``mlnode.sprint.params.race_params_hash``; a test keeps them
equal). A network racing another preset sets its hash in genesis."""
MAX_SAMPLES = 4096
"""The most leaves a validation may sample: its threshold is computed exactly, so it is bounded."""


def default_params() -> sprint_pb2.Params:
    """The ML node's default verification plan (mlnode/sprint/README.md): 145 samples, honest drift p0 = 1%,
    an honest host flagged with probability at most 10⁻⁶; weight is the proof count; fraud costs 20% of the
    collateral. A fresh message each call: callers may change it."""
    return sprint_pb2.Params(
        race_params_hash=DEFAULT_RACE_PARAMS_HASH,
        samples=145,
        honest_mismatch="0.01",
        false_flag="0.000001",
        weight_scale=1,
        fraud_slash_fraction="0.2",
    )


def honest_mismatch(params: sprint_pb2.Params) -> Fraction:
    return parse_share(params.honest_mismatch, "honest_mismatch")


def false_flag(params: sprint_pb2.Params) -> Fraction:
    return parse_share(params.false_flag, "false_flag", allow_zero=False)


def fraud_slash_fraction(params: sprint_pb2.Params) -> Fraction:
    return parse_share(params.fraud_slash_fraction, "fraud_slash_fraction")


def validate_params(params: sprint_pb2.Params) -> None:
    """A 32-byte params hash; samples in 1 … MAX_SAMPLES; p0 below 1; the shares decimals in range; a positive
    weight scale."""
    if len(params.race_params_hash) != 32:
        raise ValueError(f"sprint param race_params_hash must be 32 bytes, got {len(params.race_params_hash)}")
    if not 1 <= params.samples <= MAX_SAMPLES:
        raise ValueError(f"sprint param samples must be in 1 … {MAX_SAMPLES}, got {params.samples}")
    if honest_mismatch(params) >= 1:
        raise ValueError("sprint param honest_mismatch must be below 1")
    false_flag(params)
    fraud_slash_fraction(params)
    if params.weight_scale == 0:
        raise ValueError("sprint param weight_scale must be positive")
