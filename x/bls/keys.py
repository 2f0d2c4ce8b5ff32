"""x/bls store layout, under the module prefix ``bls/``.

    0x01                       -> Params
    0x21 | operator(20)        -> public_key (48 bytes, compressed G1): the host's registered BLS key
    0x22 | public_key(48)      -> operator(20): the reverse index (a key belongs to one host at most)
    0x23 | height(8)           -> Certificate: the certificate of that height's votes
    0x24                       -> height(8) | commitment: the last finalized block's work commitment
                                  (with vote extensions)
    0x25 | set_hash(32)        -> ValidatorSet: a set some kept certificate names
    0x26 | set_hash(32)        -> u64: how many kept certificates name it
    0x27 | operator(20)        -> height(8) | previous key (0 or 48 bytes): the host's last registration
    0x28                       -> height(8): the latest certified height
    0x29 | height(8)           -> SignedExtras: what that height's votes sign besides the commitment (written
                                  in block height-1's end, dropped in block height+1's end)
    0x2A | height(8)           -> Certificate of a height with extras, kept past the retention window
    0x2B | effective_height(8) -> ValidatorSetHandoff: a validator set CometBFT was sent, kept for good
    0x2C                       -> effective_height(8) | hash(32): the latest handoff

Heights are 8-byte big-endian, so certificates iterate in height order.
"""

from __future__ import annotations

MODULE_NAME = "bls"
STORE_PREFIX = b"bls/"
PARAMS_KEY = b"\x01"
KEY_PREFIX = b"\x21"
OPERATOR_INDEX_PREFIX = b"\x22"
CERTIFICATE_PREFIX = b"\x23"
COMMITMENT_KEY = b"\x24"
VALIDATOR_SET_PREFIX = b"\x25"
VALIDATOR_SET_REFS_PREFIX = b"\x26"
REGISTRATION_PREFIX = b"\x27"
LATEST_CERTIFIED_KEY = b"\x28"
EXTRAS_PREFIX = b"\x29"
KEPT_CERTIFICATE_PREFIX = b"\x2a"
HANDOFF_PREFIX = b"\x2b"
LATEST_HANDOFF_KEY = b"\x2c"
HISTORY_PREFIXES = (
    CERTIFICATE_PREFIX,
    COMMITMENT_KEY,
    VALIDATOR_SET_PREFIX,
    VALIDATOR_SET_REFS_PREFIX,
    LATEST_CERTIFIED_KEY,
    EXTRAS_PREFIX,
    KEPT_CERTIFICATE_PREFIX,
    HANDOFF_PREFIX,
    LATEST_HANDOFF_KEY,
)
"""What the chain's blocks wrote about themselves (certificates, their sets, what the last votes signed): not
exported, since a chain started from an export certifies its own blocks."""


def u64(value: int) -> bytes:
    return value.to_bytes(8, "big")


def key_key(operator: bytes) -> bytes:
    return KEY_PREFIX + operator


def operator_index_key(public_key: bytes) -> bytes:
    return OPERATOR_INDEX_PREFIX + public_key


def certificate_key(height: int) -> bytes:
    return CERTIFICATE_PREFIX + u64(height)


def validator_set_key(set_hash: bytes) -> bytes:
    return VALIDATOR_SET_PREFIX + set_hash


def validator_set_refs_key(set_hash: bytes) -> bytes:
    return VALIDATOR_SET_REFS_PREFIX + set_hash


def registration_key(operator: bytes) -> bytes:
    return REGISTRATION_PREFIX + operator


def extras_key(height: int) -> bytes:
    return EXTRAS_PREFIX + u64(height)


def kept_certificate_key(height: int) -> bytes:
    return KEPT_CERTIFICATE_PREFIX + u64(height)


def handoff_key(effective_height: int) -> bytes:
    return HANDOFF_PREFIX + u64(effective_height)
