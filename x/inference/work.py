"""The work commitments: every finished inference is one leaf, each block's leaves form the block's root and
each host's leaves of an epoch the host's epoch root (RFC 6962 Merkle roots, ``sdk/crypto/merkle.py``), so a
client can prove one inference is in the work a host was paid for.

Read top to bottom: the leaf; recording it at finish; the block roots (end block); pruning what is no longer
kept (end block); the views and proofs the queries give. The epoch roots are closed by the keeper itself, the
x/epochs hook (``InferenceKeeper.on_epoch_end``), so the keeper never calls back into this file.
"""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.context import Context
from sdk.crypto import bech32, merkle
from sdk.errors import ErrNotFound
from x.inference import keys
from x.inference.keeper import InferenceKeeper


def work_leaf(inference: inference_pb2.Inference) -> bytes:
    """The leaf a finished inference contributes to its block's and its host's epoch root:
    ``id ‖ executor(20) ‖ response_hash ‖ u64(prompt_tokens) ‖ u64(completion_tokens) ‖ u64(payment)``."""
    return (
        inference.id
        + bech32.decode(inference.executor)
        + inference.response_hash
        + keys.u64(inference.prompt_tokens)
        + keys.u64(inference.completion_tokens)
        + keys.u64(inference.payment)
    )


# --- at finish: one more leaf ---------------------------------------------------------------------------


def epoch_work_of(keeper: InferenceKeeper, ctx: Context, epoch: int, host: str) -> inference_pb2.EpochWork:
    """The host's running record of the epoch, a new empty one if it has finished nothing yet."""
    return keeper.get_epoch_work(ctx, epoch, bech32.decode(host)) or inference_pb2.EpochWork(epoch=epoch, host=host)


def add_leaf(
    keeper: InferenceKeeper,
    ctx: Context,
    work: inference_pb2.EpochWork,
    inference: inference_pb2.Inference,
    units: int,
) -> None:
    """A just-finished inference's leaf, at index ``work.count`` of its host's epoch (counted with its work
    units) and after its block's leaves so far."""
    leaf = work_leaf(inference)
    keeper.set_leaf(ctx, work.epoch, bech32.decode(inference.executor), work.count, leaf)
    work.count += 1
    work.units += units
    keeper.set_epoch_work(ctx, work)
    keeper.append_block_leaf(ctx, inference.finish_height, leaf)


# --- end block: the block roots -------------------------------------------------------------------------


def commit_block_roots(keeper: InferenceKeeper, ctx: Context) -> None:
    """Each block's leaves (this one's; an earlier one's only if its end block failed) into its root."""
    by_height = keeper.pop_block_leaves(ctx)
    for height in sorted(by_height):
        leaves = by_height[height]
        work = inference_pb2.BlockWork(height=height, root=merkle.root(leaves), count=len(leaves))
        keeper.set_block_work(ctx, work)
        ctx.emit("work_root", height=str(height), root=work.root.hex(), count=str(work.count))


# --- end block: pruning ---------------------------------------------------------------------------------


def prune_leaves(keeper: InferenceKeeper, ctx: Context, height: int) -> None:
    """The ended epochs' leaves due at ``height`` (or before)."""
    for key in keeper.queued(ctx, keys.LEAF_PRUNE_PREFIX, through=height):
        keeper.delete_leaves(ctx, int.from_bytes(key[9:17], "big"), key[17:])
        keeper.dequeue(ctx, key)


def prune_block_work(keeper: InferenceKeeper, ctx: Context, height: int, params: inference_pb2.Params) -> None:
    """The block roots older than ``retention_blocks``."""
    if height > params.retention_blocks:
        keeper.delete_block_works_below(ctx, height - params.retention_blocks + 1)


# --- views and proofs -----------------------------------------------------------------------------------


def epoch_work_view(keeper: InferenceKeeper, ctx: Context, epoch: int, host: bytes) -> inference_pb2.EpochWork | None:
    """The stored record; while the epoch runs, with the root over the leaves so far (final false)."""
    work = keeper.get_epoch_work(ctx, epoch, host)
    if work is not None and not work.final:
        work.root = merkle.root(keeper.leaves(ctx, epoch, host))
    return work


def work_proof(
    keeper: InferenceKeeper, ctx: Context, inference: inference_pb2.Inference
) -> query_pb2.QueryWorkProofResponse:
    """A finished inference's leaf with its inclusion proof in its host's epoch root (``final`` once the
    epoch has ended; before, the root over the leaves so far); ``sdk/38`` once the leaves are pruned."""
    host = bech32.decode(inference.executor)
    leaves = keeper.leaves(ctx, inference.epoch, host)
    work = keeper.get_epoch_work(ctx, inference.epoch, host)
    leaf = work_leaf(inference)
    if work is None or inference.work_index >= len(leaves) or leaves[inference.work_index] != leaf:
        raise ErrNotFound.wrap(f"the leaves of epoch {inference.epoch} are no longer kept")
    root = work.root if work.final else merkle.root(leaves)
    return query_pb2.QueryWorkProofResponse(
        leaf=leaf,
        index=inference.work_index,
        total=len(leaves),
        proof=merkle.inclusion_proof(leaves, inference.work_index),
        root=root,
        epoch=inference.epoch,
        host=inference.executor,
        final=work.final,
    )
