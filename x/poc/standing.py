"""A host's standing as an executor (README.md, "Host status"): its reputation, the counts of the epoch the
sequential test reads, and its status. ``INVALID`` after ``invalid_after`` invalidations in a row, or when the
sequential test on the epoch's counts rejects the honest rate; ``ACTIVE`` again at the start of an epoch after
a whole epoch without an invalidation."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context
from x.poc import types
from x.poc.keeper import PocKeeper
from x.poc.params import sprt


def this_epoch(keeper: PocKeeper, ctx: Context, host: bytes) -> poc_pb2.HostRecord:
    """The host's record with its epoch counts those of the current epoch (zeroed when they are an earlier
    one's)."""
    record = keeper.get_host(ctx, host)
    epoch = keeper.epochs.current_epoch(ctx).number
    if record.epoch != epoch:
        record.epoch, record.epoch_validated, record.epoch_invalidated = epoch, 0, 0
    return record


def validated(keeper: PocKeeper, ctx: Context, executor: bytes) -> None:
    """An answer of ``executor`` was found right: its reputation grows and its run of invalidations ends."""
    record = this_epoch(keeper, ctx, executor)
    record.validated += 1
    record.reputation += 1
    record.epoch_validated += 1
    record.consecutive_invalidations = 0
    keeper.set_host(ctx, record)


def invalidated(keeper: PocKeeper, ctx: Context, executor: bytes) -> None:
    """An answer of ``executor`` lost its dispute: counted, its reputation starts over (its rate back to the
    maximum), and it is INVALID when the run or the sequential test says so."""
    params = keeper.get_params(ctx)
    record = this_epoch(keeper, ctx, executor)
    record.invalidated += 1
    record.reputation = 0
    record.epoch_invalidated += 1
    record.consecutive_invalidations += 1
    p0, p1, alpha = sprt(params)
    run = record.consecutive_invalidations >= params.invalid_after
    tested = types.sprt_invalid(p0, p1, alpha, record.epoch_invalidated, record.epoch_validated)
    if (run or tested) and record.status != poc_pb2.HOST_STATUS_INVALID:
        record.status, record.invalid_epoch = poc_pb2.HOST_STATUS_INVALID, record.epoch
        ctx.emit(
            "poc_host_invalid",
            host=record.host,
            consecutive=str(record.consecutive_invalidations),
            epoch_invalidated=str(record.epoch_invalidated),
            epoch_validated=str(record.epoch_validated),
        )
    keeper.set_host(ctx, record)


def reinstate(keeper: PocKeeper, ctx: Context, epoch: int) -> None:
    """At the start of ``epoch``: every INVALID host that was INVALID through the whole epoch before without an
    invalidation is ACTIVE again."""
    clean = epoch - 1
    for record in keeper.hosts(ctx):
        if record.status != poc_pb2.HOST_STATUS_INVALID or record.invalid_epoch >= clean:
            continue
        if record.epoch == clean and record.epoch_invalidated:
            continue
        record.status = poc_pb2.HOST_STATUS_ACTIVE
        record.consecutive_invalidations = 0
        keeper.set_host(ctx, record)
        ctx.emit("poc_host_active", host=record.host, epoch=str(epoch))
