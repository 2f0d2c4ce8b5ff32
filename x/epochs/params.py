"""x/epochs' params (``gonka.epochs.v1.Params``): the mainnet-like default and the rules any schedule keeps."""

from __future__ import annotations

from protogen.gonka.epochs.v1 import epochs_pb2


def default_params() -> epochs_pb2.Params:
    """A day of 5-second blocks (17,280): the race for 10 minutes, its validation for 10, one block to set
    the validators, then inference. A fresh message each call: callers may change it."""
    return epochs_pb2.Params(
        epoch_length=17_280, race_validation_offset=120, set_validators_offset=240, inference_offset=241
    )


def validate_params(params: epochs_pb2.Params) -> None:
    """Stages in order, each at least one block: 0 (race) < race validation < set validators < inference
    < epoch length."""
    offsets = (
        0,
        params.race_validation_offset,
        params.set_validators_offset,
        params.inference_offset,
        params.epoch_length,
    )
    if any(a >= b for a, b in zip(offsets, offsets[1:])):
        raise ValueError(
            "epoch params must satisfy 0 < race_validation_offset < set_validators_offset < inference_offset "
            f"< epoch_length, got {list(offsets[1:])}"
        )
