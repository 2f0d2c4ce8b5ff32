"""x/slashing store layout, under the module prefix ``slashing/``.

0x01 | consensus_addr(20)            -> cosmos.slashing.v1beta1.ValidatorSigningInfo
0x02 | consensus_addr(20) | index(8) -> 0x01: the validator missed the block at this window index
0x51                                 -> gonka.slashing.v1.Params
"""

from __future__ import annotations

from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress

MODULE_NAME = "slashing"
STORE_PREFIX = b"slashing/"
SIGNING_INFO_PREFIX = b"\x01"
MISSED_PREFIX = b"\x02"
PARAMS_KEY = b"\x51"

SLASHED_POOL = "slashing"
"""The module account a slash's coins pass through: paid on to beneficiaries or burned within the slash."""

TOMBSTONE_UNTIL_NS = 253402300799 * 1_000_000_000
"""A tombstoned validator's ``jailed_until`` (9999-12-31T23:59:59Z, the Cosmos SDK's): never."""


def signing_info_key(consensus_addr: bytes) -> bytes:
    return SIGNING_INFO_PREFIX + consensus_addr


def missed_prefix(consensus_addr: bytes) -> bytes:
    return MISSED_PREFIX + consensus_addr


def missed_key(consensus_addr: bytes, index: int) -> bytes:
    return missed_prefix(consensus_addr) + index.to_bytes(8, "big")


def consensus_address_of(text: str) -> bytes:
    """A ``gonkavalcons…`` address as the 20 bytes its keys use (``sdk/7`` if malformed)."""
    try:
        return bech32.decode(text, bech32.VALCONS_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"consensus address: {exc}") from None
