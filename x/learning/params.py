"""x/learning params: the limits on a run's workers and rounds and a verdict's reason, how checkpoints are drawn
for replay and judged, and how workers are paid; changed by ``MsgUpdateParams``."""

from __future__ import annotations

from fractions import Fraction

from protogen.gonka.learning.v1 import learning_pb2
from sdk.coins import DENOM_RE
from sdk.dec import parse_share

PPM = 1_000_000
MAX_VESTING_EPOCHS = 100_000
"""x/vesting's bound on a schedule's length (its ``vest`` refuses more), as x/inference keeps it."""
MAX_VERIFIERS = 100
"""A checkpoint's drawn verifiers at most (each replays the round)."""


def default_params() -> learning_pb2.Params:
    """Every checkpoint replayed by 2 other hosts within 20 blocks; a loser slashed 20% (x/poc's dispute
    fraction); pay vested over 1 epoch (x/inference's default), in ngonka. A fresh message each call."""
    return learning_pb2.Params(
        max_workers=64,
        max_rounds=10_000,
        max_reason_len=256,
        verifiers_per_checkpoint=2,
        replay_rate_ppm=PPM,
        verdict_window=20,
        learning_slash_fraction="0.2",
        payment_vesting_epochs=1,
        denom="ngonka",
    )


def slash_fraction(params: learning_pb2.Params) -> Fraction:
    return parse_share(params.learning_slash_fraction, "learning_slash_fraction")


def validate_params(params: learning_pb2.Params) -> None:
    """A zero limit would forbid every run or verdict; a zero window would settle before any verdict."""
    for field in ("max_workers", "max_rounds", "max_reason_len", "verdict_window"):
        if getattr(params, field) == 0:
            raise ValueError(f"learning param {field} must be positive")
    if params.verifiers_per_checkpoint > MAX_VERIFIERS:
        raise ValueError(f"learning param verifiers_per_checkpoint must be at most {MAX_VERIFIERS}")
    if params.replay_rate_ppm > PPM:
        raise ValueError(f"learning param replay_rate_ppm must be at most {PPM}")
    slash_fraction(params)
    if not 1 <= params.payment_vesting_epochs <= MAX_VESTING_EPOCHS:
        raise ValueError(f"learning param payment_vesting_epochs must be in [1, {MAX_VESTING_EPOCHS}]")
    if not DENOM_RE.match(params.denom):
        raise ValueError(f"learning param denom {params.denom!r} is not a valid denom")
