"""x/poc store layout, under the module prefix ``poc/``.

0x01 | id(32)                        -> gonka.poc.v1.Validation: a finished inference's sampling record
0x02 | draw_height(8) | id(32)       -> (empty): the draw queue, inferences waiting for their beacon
0x03 | deadline(8) | id(32)          -> (empty): the deadline queue, selected inferences awaiting a verdict
0x04 | prune_height(8) | id(32)      -> (empty): the prune queue, settled records
0x05 | host(20)                      -> gonka.poc.v1.HostRecord
0x06 | validator(20) | deadline(8) | id(32) -> (empty): the selected inferences by their drawn validator, and
                                         the disputed ones by each voter that has not voted
0x07 | vote_draw_height(8) | id(32)  -> (empty): the disputes waiting for their voters' beacon
0x51                                 -> gonka.poc.v1.Params

Heights are big-endian u64, so each queue iterates in height order, then id order.
"""

from __future__ import annotations

MODULE_NAME = "poc"
STORE_PREFIX = b"poc/"
VALIDATION_PREFIX = b"\x01"
DRAW_PREFIX = b"\x02"
DEADLINE_PREFIX = b"\x03"
PRUNE_PREFIX = b"\x04"
HOST_PREFIX = b"\x05"
ASSIGNED_PREFIX = b"\x06"
VOTE_DRAW_PREFIX = b"\x07"
PARAMS_KEY = b"\x51"

ID_BYTES = 32
HEIGHT_BYTES = 8


def u64(value: int) -> bytes:
    return value.to_bytes(HEIGHT_BYTES, "big")


def validation_key(inference_id: bytes) -> bytes:
    return VALIDATION_PREFIX + inference_id


def draw_key(height: int, inference_id: bytes) -> bytes:
    return DRAW_PREFIX + u64(height) + inference_id


def deadline_key(height: int, inference_id: bytes) -> bytes:
    return DEADLINE_PREFIX + u64(height) + inference_id


def prune_key(height: int, inference_id: bytes) -> bytes:
    return PRUNE_PREFIX + u64(height) + inference_id


def queue_entry(queue: bytes, key: bytes) -> tuple[int, bytes]:
    """A queue key's (height, inference id)."""
    start = len(queue)
    return int.from_bytes(key[start : start + HEIGHT_BYTES], "big"), key[start + HEIGHT_BYTES :]


def vote_draw_key(height: int, inference_id: bytes) -> bytes:
    return VOTE_DRAW_PREFIX + u64(height) + inference_id


def host_key(host: bytes) -> bytes:
    return HOST_PREFIX + host


def assigned_prefix(validator: bytes) -> bytes:
    return ASSIGNED_PREFIX + validator


def assigned_key(validator: bytes, deadline: int, inference_id: bytes) -> bytes:
    return assigned_prefix(validator) + u64(deadline) + inference_id
