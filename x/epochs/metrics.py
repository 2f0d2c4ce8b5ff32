"""x/epochs' figures for the node's metrics: the epoch and its stage at the last committed height."""

from __future__ import annotations

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.context import Context
from sdk.telemetry.figures import Figure
from x.epochs.keeper import EpochsKeeper

STAGES = ", ".join(f"{number} {name}" for name, number in epochs_pb2.Stage.items())


def figures(keeper: EpochsKeeper, ctx: Context) -> list[Figure]:
    epoch = keeper.current_epoch(ctx)
    return [
        Figure("epoch", "The current epoch's number.", epoch.number),
        Figure("epoch_start_height", "The height of the current epoch's first block.", epoch.start_height),
        Figure("stage", f"The current stage of the epoch ({STAGES}).", keeper.current_stage(ctx)),
    ]
