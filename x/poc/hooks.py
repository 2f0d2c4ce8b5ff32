"""x/poc's x/epochs hooks: at each epoch's start the INVALID hosts that stayed clean through the epoch before are
ACTIVE again (``standing.reinstate``)."""

from __future__ import annotations

from sdk.context import Context
from x.poc import standing
from x.poc.keeper import PocKeeper


class EpochHooks:
    def __init__(self, keeper: PocKeeper) -> None:
        self.keeper = keeper

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        standing.reinstate(self.keeper, ctx, epoch)

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        return None
