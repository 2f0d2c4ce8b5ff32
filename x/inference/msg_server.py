"""x/inference's messages: the checks each needs without state (``validate_*``, run before the handler, so a
refused request never enters the mempool) and the handlers: models (the authority's), hosts' ML nodes, and
starting (one by one, or several in one ``MsgStartInferences``), reassigning and finishing inferences
(lifecycle.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit

from protogen.gonka.inference.v1 import inference_pb2, tx_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import verify_release, verify_request
from sdk.errors import ABCIError, ErrorDef
from sdk.module import MsgRoute, type_url
from sdk.params import check_authority, update_params_route
from sdk.store.cachekv import CacheKV
from x.inference import lifecycle, trained
from x.inference.errors import (
    ErrInvalidInference,
    ErrInvalidModel,
    ErrInvalidNode,
    ErrInvalidRelease,
    ErrInvalidSignature,
    ErrMaxTokens,
    ErrNotHost,
    ErrRequesterMismatch,
    ErrUnknownModel,
    ErrUnknownNode,
)
from x.inference.keeper import InferenceKeeper
from x.inference.params import validate_params
from x.inference.types import MAX_VERIFY_THRESHOLD, verify_threshold

NAME_RE = re.compile(r"^[A-Za-z0-9._/-]{1,64}\Z")
SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")
NODE_ID_RE = re.compile(r"^[a-z0-9-]{1,32}\Z")
MAX_URL = 256
MAX_MODELS_PER_NODE = 64
U64 = 1 << 64
MAX_STARTS = 256
"""Starts in one ``MsgStartInferences`` at most."""
MAX_FINISHES = 256
"""Finishes in one ``MsgFinishInferences`` at most."""
T = TypeVar("T")
R = TypeVar("R")


def model_id(name: str, weights_sha256: str) -> str:
    return f"{name}@sha256:{weights_sha256}"


# --- models and ML nodes, without state ------------------------------------------------------------------


def validate_model(model: inference_pb2.Model) -> None:
    """The model's fields by the rules (``inference/2`` otherwise)."""
    if not NAME_RE.match(model.name):
        raise ErrInvalidModel.wrap(f"name {model.name!r} must be 1-64 characters of [A-Za-z0-9._/-]")
    if not SHA256_RE.match(model.weights_sha256):
        raise ErrInvalidModel.wrap(f"weights_sha256 {model.weights_sha256!r} must be 64 lowercase hex characters")
    if model.id != model_id(model.name, model.weights_sha256):
        raise ErrInvalidModel.wrap(
            f"id {model.id!r} must be name@sha256:weights_sha256, {model_id(model.name, model.weights_sha256)!r}"
        )
    if model.context_length < 1:
        raise ErrInvalidModel.wrap("context_length must be positive")
    if model.price_per_token < 1:
        raise ErrInvalidModel.wrap("price_per_token must be positive")
    if model.verify_threshold > MAX_VERIFY_THRESHOLD:
        raise ErrInvalidModel.wrap(
            f"verify_threshold {model.verify_threshold} exceeds {MAX_VERIFY_THRESHOLD:,} (parts per million)"
        )
    if model.source_url:
        validate_url(model.source_url, "source_url", ErrInvalidModel)


def validate_url(url: str, field: str = "url", error: ErrorDef = ErrInvalidNode) -> None:
    """An http(s) URL with a host, at most ``MAX_URL`` characters without spaces or controls; ``error`` names
    whose field it is (a node's ``url``, a model's ``source_url``)."""
    if len(url) > MAX_URL or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise error.wrap(f"{field} must be at most {MAX_URL} characters without spaces or controls")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise error.wrap(f"{field} {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise error.wrap(f"{field} {url!r} must be http:// or https:// with a host")


def validate_node(node: inference_pb2.MlNode) -> None:
    """A node's fields without state (``inference/4``); the operator's address is checked by the caller."""
    if not NODE_ID_RE.match(node.node_id):
        raise ErrInvalidNode.wrap(f"node_id {node.node_id!r} must be 1-32 characters of [a-z0-9-]")
    validate_url(node.url)
    if not node.models:
        raise ErrInvalidNode.wrap("a node must serve at least one model")
    if len(node.models) > MAX_MODELS_PER_NODE:
        raise ErrInvalidNode.wrap(f"a node serves at most {MAX_MODELS_PER_NODE} models")
    if len(set(node.models)) != len(node.models):
        raise ErrInvalidNode.wrap("models must not repeat")
    if node.max_concurrency < 1:
        raise ErrInvalidNode.wrap("max_concurrency must be at least 1")


# --- the messages, without state ------------------------------------------------------------------------


def _length(value: bytes, size: int, field: str) -> None:
    if len(value) != size:
        raise ErrInvalidInference.wrap(f"{field} must be {size} bytes, got {len(value)}")


def validate_register_model(msg: tx_pb2.MsgRegisterModel) -> None:
    parse_address(msg.authority, "authority")
    if not msg.HasField("model"):
        raise ErrInvalidModel.wrap("model is missing")
    validate_model(msg.model)


def node_of(msg: tx_pb2.MsgRegisterNode) -> inference_pb2.MlNode:
    return inference_pb2.MlNode(
        operator=msg.operator,
        node_id=msg.node_id,
        url=msg.url,
        models=list(msg.models),
        memory_bytes=msg.memory_bytes,
        bandwidth_bytes_per_s=msg.bandwidth_bytes_per_s,
        max_concurrency=msg.max_concurrency,
    )


def validate_register_node(msg: tx_pb2.MsgRegisterNode) -> None:
    parse_address(msg.operator, "operator")
    validate_node(node_of(msg))


def validate_remove_node(msg: tx_pb2.MsgRemoveNode) -> None:
    parse_address(msg.operator, "operator")
    if not NODE_ID_RE.match(msg.node_id):
        raise ErrInvalidNode.wrap(f"node_id {msg.node_id!r} must be 1-32 characters of [a-z0-9-]")


def validate_start(msg: tx_pb2.MsgStartInference) -> None:
    """Everything that needs no state: addresses, sizes, the token bounds, that the public key is the
    requester's (``inference/17``) and that it signed this body and timestamp for this TA (``inference/7``)."""
    ta = parse_address(msg.ta, "ta")
    requester = parse_address(msg.requester, "requester")
    parse_address(msg.executor, "executor")
    _length(msg.requester_pubkey, 33, "requester_pubkey")
    _length(msg.body_hash, 32, "body_hash")
    _length(msg.signature, 64, "signature")
    _length(msg.params_hash, 32, "params_hash")
    if not msg.model:
        raise ErrInvalidInference.wrap("model is missing")
    if msg.max_tokens < 1:
        raise ErrMaxTokens.wrap("max_tokens must be at least 1")
    if msg.max_tokens * msg.fee_per_token >= U64:
        raise ErrInvalidInference.wrap("max_tokens × fee_per_token must be below 2^64")
    if secp256k1.address_bytes(msg.requester_pubkey) != requester:
        raise ErrRequesterMismatch.wrap(
            f"requester_pubkey is the key of "
            f"{bech32.encode(secp256k1.address_bytes(msg.requester_pubkey))}, "
            f"not of {msg.requester}"
        )
    if not verify_request(msg.requester_pubkey, msg.body_hash, msg.timestamp_ns, ta, msg.signature):
        raise ErrInvalidSignature.wrap(
            f"the signature is not {msg.requester}'s over this body hash and timestamp for TA {msg.ta}"
        )


def validate_batch(
    noun: str, role: str, signer: str, parts: Sequence[T], validate: Callable[[T], None], most: int
) -> None:
    """1 to ``most`` parts (``noun``s), each with the batch's ``signer`` as its own ``role`` field and each passing
    ``validate``; a part that does not is the sender's mistake, and refuses the whole message, its index in the
    log."""
    batch_signer = parse_address(signer, role)
    if not 1 <= len(parts) <= most:
        raise ErrInvalidInference.wrap(f"a batch holds 1 to {most} {noun}s, not {len(parts)}")
    for index, part in enumerate(parts):
        try:
            own = getattr(part, role)
            if parse_address(own, role) != batch_signer:
                raise ErrInvalidInference.wrap(f"its {role} {own} is not the batch's {signer}")
            validate(part)
        except ABCIError as err:
            raise ABCIError(err.kind, f"{noun} {index}: {err.detail}") from None


def validate_starts(msg: tx_pb2.MsgStartInferences) -> None:
    """Each start of this message's TA and passing ``validate_start`` (the TA checks the requester's signature
    itself first)."""
    validate_batch("start", "ta", msg.ta, msg.starts, validate_start, MAX_STARTS)


def validate_finish(msg: tx_pb2.MsgFinishInference) -> None:
    parse_address(msg.executor, "executor")
    _length(msg.id, 32, "id")
    _length(msg.response_hash, 32, "response_hash")
    _length(msg.logprobs_digest, 32, "logprobs_digest")
    if msg.prompt_tokens + msg.completion_tokens == 0:
        raise ErrInvalidInference.wrap("prompt_tokens + completion_tokens must be positive")


def validate_finishes(msg: tx_pb2.MsgFinishInferences) -> None:
    """Each finish of this message's executor and passing ``validate_finish``."""
    validate_batch("finish", "executor", msg.executor, msg.finishes, validate_finish, MAX_FINISHES)


def validate_reassign(msg: tx_pb2.MsgReassignInference) -> None:
    """Addresses and id; a release, when given, the executor's valid signature over this id (``inference/21``;
    whose key it is, the handler checks against the record)."""
    parse_address(msg.ta, "ta")
    parse_address(msg.executor, "executor")
    _length(msg.id, 32, "id")
    if (msg.release or msg.release_pubkey) and not verify_release(msg.release_pubkey, msg.id, msg.release):
        raise ErrInvalidRelease.wrap("release is not a valid signature of release_pubkey over this inference id")


# --- the handlers ---------------------------------------------------------------------------------------


def handle_register_model(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgRegisterModel
) -> tx_pb2.MsgRegisterModelResponse:
    """The authority registers ``msg.model`` or updates the one with its id."""
    check_authority(keeper.authority, msg.authority)
    model = msg.model
    validate_model(model)
    if model.training_run_id:
        trained.check_trained(keeper, ctx, model)
    keeper.set_model(ctx, model)
    ctx.emit(
        "register_model",
        id=model.id,
        context_length=str(model.context_length),
        price_per_token=str(model.price_per_token),
        verify_threshold=str(verify_threshold(model)),
    )
    return tx_pb2.MsgRegisterModelResponse()


def handle_register_node(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgRegisterNode
) -> tx_pb2.MsgRegisterNodeResponse:
    """A host registers (or replaces) one of its ML nodes: ``inference/5`` if the operator is no host,
    ``inference/3`` for a model not registered."""
    node = node_of(msg)
    validate_node(node)
    operator = bech32.decode(node.operator)
    if keeper.stake.get_host(ctx, operator) is None:
        raise ErrNotHost.wrap(f"{node.operator} is not a registered host")
    for model in node.models:
        if keeper.get_model(ctx, model) is None:
            raise ErrUnknownModel.wrap(f"model {model!r} is not registered")
    replaced = keeper.get_node(ctx, operator, node.node_id) is not None
    keeper.set_node(ctx, node)
    ctx.emit(
        "register_node",
        operator=node.operator,
        node_id=node.node_id,
        url=node.url,
        models=",".join(node.models),
        replaced=str(replaced).lower(),
    )
    return tx_pb2.MsgRegisterNodeResponse()


def handle_remove_node(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgRemoveNode
) -> tx_pb2.MsgRemoveNodeResponse:
    operator = parse_address(msg.operator, "operator")
    if not keeper.delete_node(ctx, operator, msg.node_id):
        raise ErrUnknownNode.wrap(f"{bech32.encode(operator)} has no node {msg.node_id!r}")
    ctx.emit("remove_node", operator=bech32.encode(operator), node_id=msg.node_id)
    return tx_pb2.MsgRemoveNodeResponse()


def handle_start(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgStartInference
) -> tx_pb2.MsgStartInferenceResponse:
    inference = lifecycle.start(keeper, ctx, msg)
    return tx_pb2.MsgStartInferenceResponse(id=inference.id, escrow=inference.escrow)


def each_on_its_own(ctx: Context, parts: Sequence[T], apply: Callable[[Context, T], R]) -> list[R | ABCIError]:
    """``apply`` to each part in a branch of its own, kept (with its events) only when it succeeds; a refused one
    is its ``ABCIError``, and the others go on."""
    results: list[R | ABCIError] = []
    for part in parts:
        branch = CacheKV(ctx.store)
        sub = ctx.with_store(branch)
        try:
            result = apply(sub, part)
        except ABCIError as err:
            results.append(err)
            continue
        branch.write()
        ctx.events.extend(sub.events)
        results.append(result)
    return results


def handle_starts(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgStartInferences
) -> tx_pb2.MsgStartInferencesResponse:
    results = [
        tx_pb2.StartResult(codespace=r.codespace, code=r.code, log=r.log)
        if isinstance(r, ABCIError)
        else tx_pb2.StartResult(id=r.id, escrow=r.escrow)
        for r in each_on_its_own(ctx, msg.starts, lambda sub, start: lifecycle.start(keeper, sub, start))
    ]
    return tx_pb2.MsgStartInferencesResponse(results=results)


def handle_finish(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgFinishInference
) -> tx_pb2.MsgFinishInferenceResponse:
    payment, refund = lifecycle.finish(keeper, ctx, msg)
    return tx_pb2.MsgFinishInferenceResponse(payment=payment, refund=refund)


def handle_finishes(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgFinishInferences
) -> tx_pb2.MsgFinishInferencesResponse:
    paid = each_on_its_own(ctx, msg.finishes, lambda sub, finish: lifecycle.finish(keeper, sub, finish))
    results = [
        tx_pb2.FinishResult(id=finish.id, codespace=r.codespace, code=r.code, log=r.log)
        if isinstance(r, ABCIError)
        else tx_pb2.FinishResult(id=finish.id, payment=r[0], refund=r[1])
        for finish, r in zip(msg.finishes, paid)
    ]
    return tx_pb2.MsgFinishInferencesResponse(results=results)


def handle_reassign(
    ctx: Context, keeper: InferenceKeeper, msg: tx_pb2.MsgReassignInference
) -> tx_pb2.MsgReassignInferenceResponse:
    lifecycle.reassign(keeper, ctx, msg)
    return tx_pb2.MsgReassignInferenceResponse()


def routes(inference: InferenceKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, inference.authority, validate_params, inference.set_params
        ),
        type_url(tx_pb2.MsgRegisterModel): MsgRoute(
            tx_pb2.MsgRegisterModel,
            lambda msg: [parse_address(msg.authority, "authority")],
            validate_register_model,
            lambda ctx, msg: handle_register_model(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgRegisterNode): MsgRoute(
            tx_pb2.MsgRegisterNode,
            lambda msg: [parse_address(msg.operator, "operator")],
            validate_register_node,
            lambda ctx, msg: handle_register_node(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgRemoveNode): MsgRoute(
            tx_pb2.MsgRemoveNode,
            lambda msg: [parse_address(msg.operator, "operator")],
            validate_remove_node,
            lambda ctx, msg: handle_remove_node(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgStartInference): MsgRoute(
            tx_pb2.MsgStartInference,
            lambda msg: [parse_address(msg.ta, "ta")],
            validate_start,
            lambda ctx, msg: handle_start(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgStartInferences): MsgRoute(
            tx_pb2.MsgStartInferences,
            lambda msg: [parse_address(msg.ta, "ta")],
            validate_starts,
            lambda ctx, msg: handle_starts(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgFinishInference): MsgRoute(
            tx_pb2.MsgFinishInference,
            lambda msg: [parse_address(msg.executor, "executor")],
            validate_finish,
            lambda ctx, msg: handle_finish(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgFinishInferences): MsgRoute(
            tx_pb2.MsgFinishInferences,
            lambda msg: [parse_address(msg.executor, "executor")],
            validate_finishes,
            lambda ctx, msg: handle_finishes(ctx, inference, msg),
        ),
        type_url(tx_pb2.MsgReassignInference): MsgRoute(
            tx_pb2.MsgReassignInference,
            lambda msg: [parse_address(msg.ta, "ta")],
            validate_reassign,
            lambda ctx, msg: handle_reassign(ctx, inference, msg),
        ),
    }
