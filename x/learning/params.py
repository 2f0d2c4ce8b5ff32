"""x/learning params: the limits on a run's workers and rounds and a verdict's reason, changed by
``MsgUpdateParams``."""

from __future__ import annotations

from protogen.gonka.learning.v1 import learning_pb2

DEFAULT_PARAMS = learning_pb2.Params(max_workers=64, max_rounds=10_000, max_reason_len=256)


def validate_params(params: learning_pb2.Params) -> None:
    """A zero limit would forbid every run or verdict."""
    for field in ("max_workers", "max_rounds", "max_reason_len"):
        if getattr(params, field) == 0:
            raise ValueError(f"learning param {field} must be positive")
