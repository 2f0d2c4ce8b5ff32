"""x/inference store layout, under the module prefix ``inference/``. Heights and epochs are 8-byte big-endian,
so every index iterates in number order.

    0x01 | id(32)                                   -> gonka.inference.v1.Inference
    0x02 | requester(20) | start_height(8) | id     -> b"" (inferences by requester, in start order)
    0x03 | executor(20) | start_height(8) | id      -> b"" (inferences by executor, in start order)
    0x04 | expiry_height(8) | id                    -> b"" (STARTED inferences by expiry height)
    0x05 | prune_height(8) | id                     -> b"" (ended inferences by the height that deletes them)
    0x06 | epoch(8) | host(20) | index(8)           -> leaf (a host's finished inferences of an epoch, in order)
    0x07 | epoch(8) | host(20)                      -> gonka.inference.v1.EpochWork
    0x08 | height(8) | epoch(8) | host(20)          -> b"" (an ended epoch's leaves, by the height that deletes them)
    0x09 | height(8) | index(8)                     -> leaf (this block's finished inferences; emptied in end block)
    0x0a | height(8)                                -> gonka.inference.v1.BlockWork
    0x10 | model id                                 -> gonka.inference.v1.Model
    0x11 | operator(20) | node_id                   -> gonka.inference.v1.MlNode
    0x12 | len(model id)(1) | model id | operator(20) | node_id -> b"" (nodes by model)
    0x51                                            -> gonka.inference.v1.Params

The escrow of STARTED inferences is the bank balance of the module account ``inference``.
"""

from __future__ import annotations

MODULE_NAME = "inference"
STORE_PREFIX = b"inference/"
INFERENCE_ACCOUNT = "inference"
"""The module account that holds the escrow of started inferences."""

INFERENCE_PREFIX = b"\x01"
BY_REQUESTER_PREFIX = b"\x02"
BY_EXECUTOR_PREFIX = b"\x03"
EXPIRY_PREFIX = b"\x04"
PRUNE_PREFIX = b"\x05"
LEAF_PREFIX = b"\x06"
EPOCH_WORK_PREFIX = b"\x07"
LEAF_PRUNE_PREFIX = b"\x08"
BLOCK_LEAF_PREFIX = b"\x09"
BLOCK_WORK_PREFIX = b"\x0a"
MODEL_PREFIX = b"\x10"
NODE_PREFIX = b"\x11"
NODE_BY_MODEL_PREFIX = b"\x12"
PARAMS_KEY = b"\x51"


def u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def inference_key(inference_id: bytes) -> bytes:
    return INFERENCE_PREFIX + inference_id


def by_requester_prefix(requester: bytes) -> bytes:
    return BY_REQUESTER_PREFIX + requester


def by_requester_key(requester: bytes, start_height: int, inference_id: bytes) -> bytes:
    return by_requester_prefix(requester) + u64(start_height) + inference_id


def by_executor_prefix(executor: bytes) -> bytes:
    return BY_EXECUTOR_PREFIX + executor


def by_executor_key(executor: bytes, start_height: int, inference_id: bytes) -> bytes:
    return by_executor_prefix(executor) + u64(start_height) + inference_id


def expiry_prefix(height: int) -> bytes:
    return EXPIRY_PREFIX + u64(height)


def expiry_key(height: int, inference_id: bytes) -> bytes:
    return expiry_prefix(height) + inference_id


def prune_key(height: int, inference_id: bytes) -> bytes:
    return PRUNE_PREFIX + u64(height) + inference_id


def leaves_prefix(epoch: int, host: bytes) -> bytes:
    return LEAF_PREFIX + u64(epoch) + host


def leaf_key(epoch: int, host: bytes, index: int) -> bytes:
    return leaves_prefix(epoch, host) + u64(index)


def epoch_work_prefix(epoch: int) -> bytes:
    return EPOCH_WORK_PREFIX + u64(epoch)


def epoch_work_key(epoch: int, host: bytes) -> bytes:
    return epoch_work_prefix(epoch) + host


def leaf_prune_key(height: int, epoch: int, host: bytes) -> bytes:
    return LEAF_PRUNE_PREFIX + u64(height) + u64(epoch) + host


def block_leaf_key(height: int, index: int) -> bytes:
    return BLOCK_LEAF_PREFIX + u64(height) + u64(index)


def block_work_key(height: int) -> bytes:
    return BLOCK_WORK_PREFIX + u64(height)


def model_key(model_id: str) -> bytes:
    return MODEL_PREFIX + model_id.encode()


def node_prefix(operator: bytes) -> bytes:
    return NODE_PREFIX + operator


def node_key(operator: bytes, node_id: str) -> bytes:
    return node_prefix(operator) + node_id.encode()


def nodes_by_model_prefix(model_id: str) -> bytes:
    raw = model_id.encode()
    return NODE_BY_MODEL_PREFIX + bytes([len(raw)]) + raw


def node_by_model_key(model_id: str, operator: bytes, node_id: str) -> bytes:
    return nodes_by_model_prefix(model_id) + operator + node_id.encode()
