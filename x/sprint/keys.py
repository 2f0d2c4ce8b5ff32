"""x/sprint store layout, under the module prefix ``sprint/``.

0x01 | epoch(8)                                  -> gonka.sprint.v1.Race: the epoch's seed and sample randomness
0x02 | epoch(8) | host(20)                       -> gonka.sprint.v1.Commitment
0x03 | epoch(8) | host(20) | validator(20)       -> gonka.sprint.v1.Validation
0x04 | epoch(8)                                  -> gonka.sprint.v1.EpochResult: the race's decision
0x05                                             -> epoch(8): the last epoch the race decided
0x06 | epoch(8)                                  -> gonka.sprint.v1.EpochSummary: the epoch's proof
0x07                                             -> height(8) | hash(32): the latest summary's block and hash
0x51                                             -> gonka.sprint.v1.Params

Races, commitments and validations are kept for the current and the previous epoch; results and summaries for
every epoch.
"""

from __future__ import annotations

MODULE_NAME = "sprint"
STORE_PREFIX = b"sprint/"
RACE_PREFIX = b"\x01"
COMMITMENT_PREFIX = b"\x02"
VALIDATION_PREFIX = b"\x03"
RESULT_PREFIX = b"\x04"
LAST_DECIDED_KEY = b"\x05"
SUMMARY_PREFIX = b"\x06"
LATEST_SUMMARY_KEY = b"\x07"
PARAMS_KEY = b"\x51"

ADDRESS_BYTES = 20


def u64(value: int) -> bytes:
    return value.to_bytes(8, "big")


def race_key(epoch: int) -> bytes:
    return RACE_PREFIX + u64(epoch)


def commitments_prefix(epoch: int) -> bytes:
    return COMMITMENT_PREFIX + u64(epoch)


def commitment_key(epoch: int, host: bytes) -> bytes:
    return commitments_prefix(epoch) + host


def validations_prefix(epoch: int, host: bytes = b"") -> bytes:
    """An epoch's validations, or those of one host."""
    return VALIDATION_PREFIX + u64(epoch) + host


def validation_key(epoch: int, host: bytes, validator: bytes) -> bytes:
    return validations_prefix(epoch, host) + validator


def result_key(epoch: int) -> bytes:
    return RESULT_PREFIX + u64(epoch)


def summary_key(epoch: int) -> bytes:
    return SUMMARY_PREFIX + u64(epoch)
