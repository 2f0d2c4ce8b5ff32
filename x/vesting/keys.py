"""x/vesting store layout, under the module prefix ``vesting/``.

    0x03 | address(20)                    -> gonka.vesting.v1.VestingAccount: totals and delegation tracking
    0x04 | address(20)                    -> gonka.vesting.v1.TimedVesting: a genesis lock by block time
    0x05                                  -> last block time, ns (8 bytes, big-endian)
    0x06 | address(20)                    -> gonka.vesting.v1.ReleaseRate: what the next release epoch releases
                                             (only while not zero: the accounts a release visits)
    0x07 | epoch(8) | address(20)         -> gonka.vesting.v1.RateChange: the rate's change at that epoch
    0x08 | address(20) | epoch(8)         -> b"": the same changes by account (schedule queries)
    0x09                                  -> the last release epoch (8 bytes, big-endian)
    0x51                                  -> gonka.vesting.v1.Params

(0x01 and 0x02 held one part per epoch and account; they are no longer written.)
"""

from __future__ import annotations

MODULE_NAME = "vesting"
STORE_PREFIX = b"vesting/"
ACCOUNT_PREFIX = b"\x03"
TIMED_PREFIX = b"\x04"
LAST_BLOCK_TIME_KEY = b"\x05"
RATE_PREFIX = b"\x06"
CHANGE_PREFIX = b"\x07"
ACCOUNT_CHANGE_PREFIX = b"\x08"
LAST_RELEASE_EPOCH_KEY = b"\x09"
PARAMS_KEY = b"\x51"


def account_key(address: bytes) -> bytes:
    return ACCOUNT_PREFIX + address


def timed_key(address: bytes) -> bytes:
    return TIMED_PREFIX + address


def rate_key(address: bytes) -> bytes:
    return RATE_PREFIX + address


def change_key(epoch: int, address: bytes) -> bytes:
    return CHANGE_PREFIX + epoch.to_bytes(8, "big") + address


def changes_end(epoch: int) -> bytes:
    """The end (exclusive) of every rate change at or before ``epoch``."""
    return CHANGE_PREFIX + (epoch + 1).to_bytes(8, "big")


def account_change_key(address: bytes, epoch: int) -> bytes:
    return ACCOUNT_CHANGE_PREFIX + address + epoch.to_bytes(8, "big")


def account_changes_prefix(address: bytes) -> bytes:
    return ACCOUNT_CHANGE_PREFIX + address
