"""x/inference's params (``gonka.inference.v1.Params``): defaults and rules."""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2
from sdk.coins import DENOM_RE

MAX_VESTING_EPOCHS = 100_000
"""x/vesting's bound on a schedule's length (its ``vest`` refuses more)."""


def default_params() -> inference_pb2.Params:
    """A fresh message each call: 100-block timeout, a week of 5-second blocks kept, a (60 s, 30 s) request
    window, at most 131,072 tokens an inference, payments vested over 1 epoch, in ngonka, and an executor alone with
    its inference for 20 blocks."""
    return inference_pb2.Params(
        timeout_blocks=100,
        retention_blocks=120_960,
        request_max_age_s=60,
        request_max_future_s=30,
        max_tokens_limit=131_072,
        payment_vesting_epochs=1,
        denom="ngonka",
        executor_window_blocks=20,
    )


def validate_params(params: inference_pb2.Params) -> None:
    """Every count at least 1 (the window sides may be 0), vesting within x/vesting's bound, a valid denom."""
    for field in ("timeout_blocks", "retention_blocks", "max_tokens_limit"):
        if getattr(params, field) < 1:
            raise ValueError(f"inference param {field} must be at least 1")
    for field in ("timeout_blocks", "retention_blocks", "executor_window_blocks"):
        if getattr(params, field) > 1 << 40:
            raise ValueError(f"inference param {field} must be at most 2^40")
    if not 1 <= params.payment_vesting_epochs <= MAX_VESTING_EPOCHS:
        raise ValueError(f"inference param payment_vesting_epochs must be in [1, {MAX_VESTING_EPOCHS}]")
    if params.request_max_age_s > 1 << 32 or params.request_max_future_s > 1 << 32:
        raise ValueError("inference params request_max_age_s and request_max_future_s must be at most 2^32")
    if not DENOM_RE.match(params.denom):
        raise ValueError(f"inference param denom {params.denom!r} is not a valid denom")
