"""What a module implements to act on epochs (app.py hands the epochs keeper a list of them, in app order)."""

from __future__ import annotations

from typing import Protocol

from sdk.context import Context


class EpochHooks(Protocol):
    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        """The last block of ``epoch`` is committed; called at the first block of the next, before its start."""

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        """``epoch``'s first block begins (never called for epoch 0, which genesis starts)."""

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        """``stage`` (a ``gonka.epochs.v1.Stage``) of ``epoch`` begins at this block."""
