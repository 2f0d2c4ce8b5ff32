"""The current epoch, moved on block by block, and the hooks it calls at boundaries."""

from __future__ import annotations

from collections.abc import Sequence

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.context import Context
from sdk.module import run_hook
from sdk.params import GOV_AUTHORITY
from x.epochs import keys, schedule
from x.epochs.hooks import EpochHooks
from x.epochs.params import default_params


class EpochsKeeper:
    """Owns the ``epochs/`` prefix: the epoch record and the schedule."""

    def __init__(self, authority: bytes = GOV_AUTHORITY) -> None:
        self.authority = authority
        self.hooks: tuple[EpochHooks, ...] = ()

    def set_hooks(self, hooks: Sequence[EpochHooks]) -> None:
        """The modules told of epoch boundaries and stages, in the order they are told (app order). Set once."""
        if self.hooks:
            raise ValueError("epoch hooks are already set")
        self.hooks = tuple(hooks)

    def get_params(self, ctx: Context) -> epochs_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return epochs_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: epochs_pb2.Params) -> None:
        """The schedule the next epoch takes; the current one keeps the schedule it started with."""
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch:
        """The epoch of the block being executed (of the last committed one, in queries). Before the first
        block, epoch 0 starting at the next block."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.CURRENT_EPOCH_KEY)
        if raw is None:
            return epochs_pb2.Epoch(number=0, start_height=ctx.header.height + 1, params=self.get_params(ctx))
        return epochs_pb2.Epoch.FromString(raw)

    def set_current_epoch(self, ctx: Context, epoch: epochs_pb2.Epoch) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.CURRENT_EPOCH_KEY, epoch.SerializeToString())

    def current_stage(self, ctx: Context) -> int:
        return schedule.stage_at(self.current_epoch(ctx), ctx.header.height)

    def begin_block(self, ctx: Context) -> None:
        """Move to this block: at an epoch's last block + 1, end it and start the next (with the params as
        they are now); at a stage's first block, announce it. Epoch 0 starts at the chain's first block."""
        height = ctx.header.height
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.CURRENT_EPOCH_KEY)
        if raw is None:
            self.set_current_epoch(ctx, epochs_pb2.Epoch(number=0, start_height=height, params=self.get_params(ctx)))
            return
        epoch = epochs_pb2.Epoch.FromString(raw)
        if height == schedule.next_epoch_height(epoch):
            self._call("on_epoch_end", ctx, epoch.number)
            epoch = epochs_pb2.Epoch(number=epoch.number + 1, start_height=height, params=self.get_params(ctx))
            self.set_current_epoch(ctx, epoch)
            ctx.emit("epoch_start", epoch=str(epoch.number), height=str(height))
            self._call("on_epoch_start", ctx, epoch.number)
        stage = schedule.stage_starting_at(epoch, height)
        if stage is not None:
            ctx.emit("epoch_stage", epoch=str(epoch.number), stage=epochs_pb2.Stage.Name(stage))
            self._call("on_stage", ctx, epoch.number, stage)

    def _call(self, hook: str, ctx: Context, *args: int) -> None:
        """One hook of every module in turn, each in its own branch (a failing one loses only its writes)."""
        for module in self.hooks:
            run_hook(ctx, f"{hook} of {type(module).__name__}", lambda c, m=module: getattr(m, hook)(c, *args))
