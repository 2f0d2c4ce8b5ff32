"""x/poc's end block (README.md, "An inference's validation, block by block"): the draws due, the disputes' voters
drawn, the windows and votes closed, the settled records pruned, in that order."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context
from x.poc import disputes, keys
from x.poc.keeper import SETTLED, PocKeeper


def process_draws(keeper: PocKeeper, ctx: Context, height: int) -> None:
    """Draw every pending record whose beacon height is before ``height`` (its certificate is carried by the
    block after it)."""
    store = ctx.kv(keys.STORE_PREFIX)
    for draw_height, inference_id in keeper.queue(ctx, keys.DRAW_PREFIX, through=height - 1):
        store.delete(keys.draw_key(draw_height, inference_id))
        record = keeper.get_validation(ctx, inference_id)
        if record is not None and record.status == poc_pb2.STATUS_PENDING:
            keeper.draw(ctx, record)


def process_deadlines(keeper: PocKeeper, ctx: Context, height: int) -> None:
    """Every selected record whose last accepted height is ``height`` or before: missed; every dispute whose
    voting closed: decided on the votes sent."""
    store = ctx.kv(keys.STORE_PREFIX)
    for deadline, inference_id in keeper.queue(ctx, keys.DEADLINE_PREFIX, through=height):
        record = keeper.get_validation(ctx, inference_id)
        if record is not None and record.status == poc_pb2.STATUS_SELECTED:
            keeper.unqueue_selected(ctx, record)
            keeper.miss(ctx, record)
        elif record is not None and record.status == poc_pb2.STATUS_DISPUTED:
            disputes.close(keeper, ctx, record)
        else:
            store.delete(keys.deadline_key(deadline, inference_id))


def process_pruning(keeper: PocKeeper, ctx: Context, height: int) -> None:
    store = ctx.kv(keys.STORE_PREFIX)
    for prune_height, inference_id in keeper.queue(ctx, keys.PRUNE_PREFIX, through=height):
        store.delete(keys.prune_key(prune_height, inference_id))
        record = keeper.get_validation(ctx, inference_id)
        if record is not None and record.status in SETTLED:
            store.delete(keys.validation_key(inference_id))


def process_vote_draws(keeper: PocKeeper, ctx: Context, height: int) -> None:
    """Draw the voters of every dispute whose beacon height is before ``height``."""
    store = ctx.kv(keys.STORE_PREFIX)
    for draw_height, inference_id in keeper.queue(ctx, keys.VOTE_DRAW_PREFIX, through=height - 1):
        store.delete(keys.vote_draw_key(draw_height, inference_id))
        record = keeper.get_validation(ctx, inference_id)
        if record is not None and record.status == poc_pb2.STATUS_DISPUTED and not record.vote_deadline_height:
            disputes.draw_voters(keeper, ctx, record)


def process_block(keeper: PocKeeper, ctx: Context, height: int) -> None:
    process_draws(keeper, ctx, height)
    process_vote_draws(keeper, ctx, height)
    process_deadlines(keeper, ctx, height)
    process_pruning(keeper, ctx, height)
