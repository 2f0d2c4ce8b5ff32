"""An inference's life on chain: started (its escrow ``max_tokens × fee_per_token`` held by the module account
``inference``), then finished (the tokens produced paid to the executor through vesting, the rest refunded,
its work recorded: work.py) or expired (refunded whole), then pruned ``retention_blocks`` later.

Amounts are integers in the inference's ``denom``; the only time read is the block time (consensus').
"""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2, tx_pb2
from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id
from sdk.errors import ErrInsufficientFunds
from x.inference import keys, work
from x.inference.errors import (
    ErrDuplicate,
    ErrExecutorWindow,
    ErrFeeTooLow,
    ErrInvalidInference,
    ErrInvalidRelease,
    ErrMaxTokens,
    ErrNotExecutor,
    ErrNotHost,
    ErrNotServing,
    ErrNotStarted,
    ErrNotTA,
    ErrTimestamp,
    ErrTooManyTokens,
    ErrUnknownInference,
    ErrUnknownModel,
)
from x.inference.keeper import EXPIRED, FINISHED, STARTED, Inference, InferenceKeeper

NS = 10**9


def coins(denom: str, amount: int) -> Coins:
    return make_coins([(denom, amount)])


# --- start ----------------------------------------------------------------------------------------------


def check_request_time(ctx: Context, msg: tx_pb2.MsgStartInference, params: inference_pb2.Params) -> None:
    """The request's timestamp within ``[t − request_max_age_s, t + request_max_future_s]`` of the block
    time ``t`` (``inference/8``)."""
    now = ctx.header.time_ns
    if msg.timestamp_ns + params.request_max_age_s * NS < now:
        raise ErrTimestamp.wrap(
            f"request timestamp {msg.timestamp_ns} is more than {params.request_max_age_s}s before the block time {now}"
        )
    if msg.timestamp_ns > now + params.request_max_future_s * NS:
        raise ErrTimestamp.wrap(
            f"request timestamp {msg.timestamp_ns} is more than "
            f"{params.request_max_future_s}s after the block time {now}"
        )


def check_model_and_executor(
    keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgStartInference, executor: bytes
) -> inference_pb2.Model:
    """The model registered and priced at most ``fee_per_token``; the executor a host serving it."""
    model = keeper.get_model(ctx, msg.model)
    if model is None:
        raise ErrUnknownModel.wrap(f"model {msg.model!r} is not registered")
    if msg.fee_per_token < model.price_per_token:
        raise ErrFeeTooLow.wrap(
            f"fee_per_token {msg.fee_per_token} is below {model.id}'s price {model.price_per_token}"
        )
    if keeper.stake.get_host(ctx, executor) is None:
        raise ErrNotHost.wrap(f"executor {msg.executor} is not a registered host")
    if not keeper.serves(ctx, executor, model.id):
        raise ErrNotServing.wrap(f"executor {msg.executor} has no node serving {model.id}")
    return model


def hold_escrow(
    keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgStartInference, requester: bytes, denom: str
) -> int:
    """Move ``max_tokens × fee_per_token`` from the requester's spendable balance to ``inference``."""
    escrow = msg.max_tokens * msg.fee_per_token
    spendable = dict(keeper.bank.spendable_coins(ctx, requester)).get(denom, 0)
    if spendable < escrow:
        raise ErrInsufficientFunds.wrap(
            f"requester {msg.requester} has {spendable}{denom} spendable, the escrow is {escrow}{denom}"
        )
    module = keeper.accounts.ensure_module_account(ctx, keys.INFERENCE_ACCOUNT)
    keeper.bank.send_coins(ctx, requester, module, coins(denom, escrow))
    return escrow


def start(keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgStartInference) -> Inference:
    """MsgStartInference's state checks and the escrow (the message's stateless checks, the requester's
    key and signature among them, ran in validate_basic)."""
    params = keeper.get_params(ctx)
    requester, executor = bech32.decode(msg.requester), bech32.decode(msg.executor)
    if msg.max_tokens > params.max_tokens_limit:
        raise ErrMaxTokens.wrap(f"max_tokens {msg.max_tokens} exceeds the limit {params.max_tokens_limit}")
    check_request_time(ctx, msg, params)
    model = check_model_and_executor(keeper, ctx, msg, executor)
    the_id = inference_id(requester, msg.body_hash, msg.timestamp_ns)
    known = keeper.get_inference(ctx, the_id)
    if known is not None:
        return take_over(keeper, ctx, msg, known, executor)
    escrow = hold_escrow(keeper, ctx, msg, requester, params.denom)
    height = ctx.header.height
    inference = Inference(
        id=the_id,
        requester=msg.requester,
        ta=msg.ta,
        executor=msg.executor,
        model=model.id,
        max_tokens=msg.max_tokens,
        fee_per_token=msg.fee_per_token,
        escrow=escrow,
        body_hash=msg.body_hash,
        timestamp_ns=msg.timestamp_ns,
        seed=msg.seed,
        params_hash=msg.params_hash,
        start_height=height,
        status=STARTED,
        expiry_height=height + params.timeout_blocks,
        denom=params.denom,
        assigned_height=height,
    )
    keeper.set_inference(ctx, inference)
    ctx.emit(
        "start_inference",
        id=the_id.hex(),
        requester=msg.requester,
        ta=msg.ta,
        executor=msg.executor,
        model=model.id,
        escrow=f"{escrow}{params.denom}",
        max_tokens=str(msg.max_tokens),
        seed=str(msg.seed),
        params_hash=msg.params_hash.hex(),
    )
    return inference


def check_window(ctx: Context, inference: Inference, params: inference_pb2.Params) -> None:
    """The executor has the inference alone for ``executor_window_blocks`` from its assignment (``inference/20``):
    its answer may be on its way, and a second executor would serve the same payment again."""
    free_at = inference.assigned_height + params.executor_window_blocks
    if ctx.header.height < free_at:
        raise ErrExecutorWindow.wrap(
            f"inference {inference.id.hex()} is {inference.executor}'s until height "
            f"{free_at}; before, only with its release"
        )


def assign(keeper: InferenceKeeper, ctx: Context, inference: Inference, executor: str, released: bool) -> None:
    """Give a STARTED inference to ``executor`` at this height. Unless the old executor released it, its finish
    still stands (``previous_executor``): its answer may be in flight, and it is paid if it finishes first."""
    inference.previous_executor = "" if released else inference.executor
    inference.assigned_height = ctx.header.height
    keeper.set_executor(ctx, inference, executor)


def take_over(
    keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgStartInference, inference: Inference, executor: bytes
) -> Inference:
    """The same request started again through another TA: the requester's client failed over (same body and
    timestamp, so the same id, signed for the new TA, which ``validate_basic`` checked). A STARTED inference
    passes to the new TA and executor with its escrow, on the same terms, once its executor's window is over
    (``inference/20``); anything else is a duplicate, never charged twice (``inference/9``)."""
    same_terms = (msg.model, msg.max_tokens, msg.fee_per_token, msg.seed, msg.params_hash) == (
        inference.model,
        inference.max_tokens,
        inference.fee_per_token,
        inference.seed,
        inference.params_hash,
    )
    if inference.status != STARTED or bech32.decode(msg.ta) == bech32.decode(inference.ta) or not same_terms:
        raise ErrDuplicate.wrap(
            f"inference {inference.id.hex()} was already started; a retried request is not charged again"
        )
    check_window(ctx, inference, keeper.get_params(ctx))
    previous_ta, previous_executor = inference.ta, inference.executor
    inference.ta = msg.ta
    assign(keeper, ctx, inference, bech32.encode(executor), released=False)  # stores the new TA too
    ctx.emit(
        "take_over_inference",
        id=inference.id.hex(),
        previous_ta=previous_ta,
        ta=inference.ta,
        previous_executor=previous_executor,
        executor=inference.executor,
    )
    return inference


# --- reassign -------------------------------------------------------------------------------------------


def reassign(keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgReassignInference) -> Inference:
    """MsgReassignInference: the TA that started a STARTED inference gives it to another host serving its model
    (its node failed before any token reached the client). The escrow, fee, expiry and everything else stay;
    only the executor changes. With the old executor's release (its key and signature giving the inference up)
    at once, and the old one can no longer finish it (``inference/14``); without, only after its window
    (``inference/20``), and its finish still stands."""
    inference = keeper.get_inference(ctx, msg.id)
    if inference is None:
        raise ErrUnknownInference.wrap(f"no inference {msg.id.hex()}")
    if bech32.decode(msg.ta) != bech32.decode(inference.ta):
        raise ErrNotTA.wrap(f"{msg.ta} did not start inference {msg.id.hex()} ({inference.ta} did)")
    if inference.status != STARTED:
        raise ErrNotStarted.wrap(f"inference {msg.id.hex()} is {inference_pb2.Status.Name(inference.status)}")
    executor = bech32.decode(msg.executor)
    if executor == bech32.decode(inference.executor):
        raise ErrInvalidInference.wrap(f"{msg.executor} is already the executor of inference {msg.id.hex()}")
    if keeper.stake.get_host(ctx, executor) is None:
        raise ErrNotHost.wrap(f"executor {msg.executor} is not a registered host")
    if not keeper.serves(ctx, executor, inference.model):
        raise ErrNotServing.wrap(f"executor {msg.executor} has no node serving {inference.model}")
    released = bool(msg.release)
    if released and secp256k1.address_bytes(msg.release_pubkey) != bech32.decode(inference.executor):
        raise ErrInvalidRelease.wrap(
            f"the release is signed by "
            f"{bech32.encode(secp256k1.address_bytes(msg.release_pubkey))}, not by the "
            f"executor {inference.executor}"
        )
    if not released:
        check_window(ctx, inference, keeper.get_params(ctx))
    previous = inference.executor
    assign(keeper, ctx, inference, bech32.encode(executor), released)
    ctx.emit(
        "reassign_inference", id=inference.id.hex(), ta=inference.ta, previous=previous, executor=inference.executor
    )
    return inference


# --- finish ---------------------------------------------------------------------------------------------


def finishable(keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgFinishInference) -> Inference:
    """The STARTED inference ``msg`` finishes, by its executor, with token counts in range."""
    inference = keeper.get_inference(ctx, msg.id)
    if inference is None:
        raise ErrUnknownInference.wrap(f"no inference {msg.id.hex()}")
    if msg.executor not in (inference.executor, inference.previous_executor):
        raise ErrNotExecutor.wrap(
            f"{msg.executor} is not the executor of inference {msg.id.hex()} ({inference.executor} is)"
        )
    if inference.status != STARTED:
        raise ErrNotStarted.wrap(f"inference {msg.id.hex()} is {inference_pb2.Status.Name(inference.status)}")
    if msg.completion_tokens > inference.max_tokens:
        raise ErrTooManyTokens.wrap(
            f"completion_tokens {msg.completion_tokens} exceed max_tokens {inference.max_tokens}"
        )
    model = keeper.get_model(ctx, inference.model)
    if model is not None and msg.prompt_tokens > model.context_length:
        raise ErrTooManyTokens.wrap(
            f"prompt_tokens {msg.prompt_tokens} exceed {model.id}'s context length {model.context_length}"
        )
    return inference


def settle(
    keeper: InferenceKeeper, ctx: Context, inference: Inference, payment: int, params: inference_pb2.Params
) -> int:
    """Pay ``payment`` from the escrow to the executor through vesting and refund the rest to the requester;
    the refund."""
    refund = inference.escrow - payment
    if payment:
        keeper.vesting.vest(
            ctx,
            keys.INFERENCE_ACCOUNT,
            bech32.decode(inference.executor),
            coins(inference.denom, payment),
            params.payment_vesting_epochs,
        )
    if refund:
        keeper.bank.send_coins(ctx, keeper.address, bech32.decode(inference.requester), coins(inference.denom, refund))
    return refund


def finish(keeper: InferenceKeeper, ctx: Context, msg: tx_pb2.MsgFinishInference) -> tuple[int, int]:
    """MsgFinishInference: pay the executor (vested), refund the rest, report the work; (payment, refund)."""
    inference = finishable(keeper, ctx, msg)
    if msg.executor != inference.executor:  # the previous executor finished first: its answer is the one paid
        keeper.set_executor(ctx, inference, msg.executor)
    inference.previous_executor = ""
    params = keeper.get_params(ctx)
    payment = msg.completion_tokens * inference.fee_per_token
    refund = settle(keeper, ctx, inference, payment, params)
    epoch = keeper.epochs.current_epoch(ctx).number
    units = msg.prompt_tokens + msg.completion_tokens
    keeper.rewards.report_work(ctx, epoch, bech32.decode(inference.executor), units)
    epoch_work = work.epoch_work_of(keeper, ctx, epoch, inference.executor)
    height = ctx.header.height
    keeper.dequeue(ctx, keys.expiry_key(inference.expiry_height, inference.id))
    inference.status = FINISHED
    inference.response_hash = msg.response_hash
    inference.prompt_tokens = msg.prompt_tokens
    inference.completion_tokens = msg.completion_tokens
    inference.logprobs_digest = msg.logprobs_digest
    inference.payment = payment
    inference.finish_height = height
    inference.epoch = epoch
    inference.work_index = epoch_work.count
    inference.prune_height = height + params.retention_blocks
    keeper.put_ended(ctx, inference)
    work.add_leaf(keeper, ctx, epoch_work, inference, units)
    for hook in keeper.finish_hooks:
        hook.on_inference_finished(ctx, inference)
    ctx.emit(
        "finish_inference",
        id=inference.id.hex(),
        executor=inference.executor,
        payment=f"{payment}{inference.denom}",
        refund=f"{refund}{inference.denom}",
        prompt_tokens=str(msg.prompt_tokens),
        completion_tokens=str(msg.completion_tokens),
    )
    return payment, refund


# --- end block: timeouts and pruning --------------------------------------------------------------------


def expire(keeper: InferenceKeeper, ctx: Context, the_id: bytes, height: int, params: inference_pb2.Params) -> None:
    """A STARTED inference past its expiry height: EXPIRED, its whole escrow back to the requester."""
    inference = keeper.get_inference(ctx, the_id)
    if inference is None or inference.status != STARTED:
        return
    keeper.bank.send_coins(
        ctx, keeper.address, bech32.decode(inference.requester), coins(inference.denom, inference.escrow)
    )
    inference.status = EXPIRED
    inference.finish_height = height
    inference.prune_height = height + params.retention_blocks
    keeper.put_ended(ctx, inference)
    ctx.emit(
        "expire_inference",
        id=the_id.hex(),
        requester=inference.requester,
        executor=inference.executor,
        refund=f"{inference.escrow}{inference.denom}",
    )


def expire_due(keeper: InferenceKeeper, ctx: Context, height: int, params: inference_pb2.Params) -> None:
    """Every inference in the expiry index at ``height`` (or below), in key order."""
    for key in keeper.queued(ctx, keys.EXPIRY_PREFIX, through=height):
        expire(keeper, ctx, key[9:], height, params)
        keeper.dequeue(ctx, key)


def prune_ended(keeper: InferenceKeeper, ctx: Context, height: int) -> None:
    """Delete the ended records due at ``height`` (or before), with their indexes."""
    for key in keeper.queued(ctx, keys.PRUNE_PREFIX, through=height):
        inference = keeper.get_inference(ctx, key[9:])
        keeper.dequeue(ctx, key)
        if inference is not None and inference.status != STARTED:
            keeper.delete_inference(ctx, inference)
