"""x/learning store layout, under the module prefix ``learning/``. Integers are big-endian, so key order is
numeric order; addresses are length-prefixed, so a round's workers iterate in address-byte order.

    0x01                                           -> next run id (8 bytes)
    0x02                                           -> gonka.learning.v1.Params
    0x11 | run(8)                                  -> gonka.learning.v1.TrainingRun
    0x12 | run(8) | round(4) | len | worker        -> gonka.learning.v1.Checkpoint
    0x13 | run(8) | round(4) | len | worker | len | verifier -> gonka.learning.v1.Verdict
    0x14 | run(8) | round(4) | len | worker        -> PRESENT: the checkpoint is PENDING (settled in an end block)
"""

from __future__ import annotations

MODULE_NAME = "learning"
STORE_PREFIX = b"learning/"
NEXT_RUN_ID_KEY = b"\x01"
PARAMS_KEY = b"\x02"
RUN_PREFIX = b"\x11"
CHECKPOINT_PREFIX = b"\x12"
VERDICT_PREFIX = b"\x13"
PENDING_PREFIX = b"\x14"
LEARNING_ACCOUNT = "learning"
"""The module account holding every run's escrow (budget − paid − refunded)."""
HASH_LEN = 32
MAX_PRESET_LEN = 64


def encode_id(value: int) -> bytes:
    return value.to_bytes(8, "big")


def decode_id(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def _address(address: bytes) -> bytes:
    return bytes([len(address)]) + address


def run_key(run_id: int) -> bytes:
    return RUN_PREFIX + encode_id(run_id)


def round_checkpoints_prefix(run_id: int, round_: int) -> bytes:
    return run_checkpoints_prefix(run_id) + round_.to_bytes(4, "big")


def run_checkpoints_prefix(run_id: int) -> bytes:
    return CHECKPOINT_PREFIX + encode_id(run_id)


def checkpoint_key(run_id: int, round_: int, worker: bytes) -> bytes:
    return round_checkpoints_prefix(run_id, round_) + _address(worker)


def pending_key(run_id: int, round_: int, worker: bytes) -> bytes:
    """The pending index: the checkpoint's key under ``PENDING_PREFIX``."""
    return PENDING_PREFIX + checkpoint_key(run_id, round_, worker)[1:]


def decode_pending(key: bytes) -> tuple[int, int, bytes]:
    """(run, round, worker) of a pending-index key."""
    return decode_id(key[1:9]), int.from_bytes(key[9:13], "big"), key[14:]


def draw_subject(run_id: int, round_: int, worker: bytes) -> bytes:
    """What the beacon is hashed with to draw a checkpoint's replay and verifiers."""
    return encode_id(run_id) + round_.to_bytes(4, "big") + _address(worker)


def checkpoint_verdicts_prefix(run_id: int, round_: int, worker: bytes) -> bytes:
    return VERDICT_PREFIX + encode_id(run_id) + round_.to_bytes(4, "big") + _address(worker)


def verdict_key(run_id: int, round_: int, worker: bytes, verifier: bytes) -> bytes:
    return checkpoint_verdicts_prefix(run_id, round_, worker) + _address(verifier)
