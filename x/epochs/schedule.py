"""Where a height falls in an epoch: pure functions of the epoch record and the height (no wall clock).

An epoch starts at ``start_height`` and lasts ``params.epoch_length`` blocks. Offsets from its first block
divide it into stages: the race from offset 0, then race validation, set validators, and inference for the
rest. Epoch 0, the genesis epoch, has no race: all of it is inference, served by the genesis validators.
"""

from __future__ import annotations

from protogen.gonka.epochs.v1 import epochs_pb2

RACE = epochs_pb2.STAGE_RACE
RACE_VALIDATION = epochs_pb2.STAGE_RACE_VALIDATION
SET_VALIDATORS = epochs_pb2.STAGE_SET_VALIDATORS
INFERENCE = epochs_pb2.STAGE_INFERENCE


def stage_starts(params: epochs_pb2.Params) -> list[tuple[int, int]]:
    """(offset, stage) of each stage's first block, in order."""
    return [
        (0, RACE),
        (params.race_validation_offset, RACE_VALIDATION),
        (params.set_validators_offset, SET_VALIDATORS),
        (params.inference_offset, INFERENCE),
    ]


def next_epoch_height(epoch: epochs_pb2.Epoch) -> int:
    return epoch.start_height + epoch.params.epoch_length


def stage_at(epoch: epochs_pb2.Epoch, height: int) -> int:
    """The stage of ``height``, a block of ``epoch``."""
    if epoch.number == 0:
        return INFERENCE
    offset = height - epoch.start_height
    return [stage for start, stage in stage_starts(epoch.params) if start <= offset][-1]


def stage_starting_at(epoch: epochs_pb2.Epoch, height: int) -> int | None:
    """The stage whose first block is ``height`` (None if it is not a stage's first block)."""
    if epoch.number == 0:
        return None
    offset = height - epoch.start_height
    return next((stage for start, stage in stage_starts(epoch.params) if start == offset), None)


def next_stage(epoch: epochs_pb2.Epoch, height: int) -> tuple[int, int]:
    """(stage, its first height) of the next stage after ``height``: the next epoch's race if this epoch
    has no stage left (as epoch 0 has none)."""
    if epoch.number > 0:
        offset = height - epoch.start_height
        for start, stage in stage_starts(epoch.params):
            if start > offset:
                return stage, epoch.start_height + start
    return RACE, next_epoch_height(epoch)
