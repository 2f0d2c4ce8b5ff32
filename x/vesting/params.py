"""x/vesting's params (``gonka.vesting.v1.Params``): their defaults and the rules any value must keep."""

from __future__ import annotations

from protogen.gonka.vesting.v1 import vesting_pb2

DEFAULT_REWARD_VESTING_EPOCHS = 180
MAX_VESTING_EPOCHS = 100_000
"""A bound on any schedule's length (a schedule is stored as three rate changes, whatever its length; the
Schedule query and genesis export still list one part per epoch)."""


def default_params() -> vesting_pb2.Params:
    """The real network's: rewards vest over 180 epochs. A fresh message each call."""
    return vesting_pb2.Params(reward_vesting_epochs=DEFAULT_REWARD_VESTING_EPOCHS)


def validate_params(params: vesting_pb2.Params) -> None:
    if not 1 <= params.reward_vesting_epochs <= MAX_VESTING_EPOCHS:
        raise ValueError(
            f"vesting param reward_vesting_epochs must be in [1, {MAX_VESTING_EPOCHS}], "
            f"got {params.reward_vesting_epochs}"
        )
