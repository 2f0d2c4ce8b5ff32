"""x/stake store layout, under the module prefix ``stake/``.

    0x21 | operator(20)       -> cosmos.staking.v1beta1.Validator
    0x22 | consensus_addr(20) -> operator(20)
    0x23 | ed25519_pubkey(32) -> power (8 bytes, big-endian): the validator set last sent to CometBFT
    0x51                      -> gonka.stake.v1.Params
"""

from __future__ import annotations

import hashlib

MODULE_NAME = "stake"
STORE_PREFIX = b"stake/"
VALIDATOR_PREFIX = b"\x21"
CONSENSUS_INDEX_PREFIX = b"\x22"
LAST_POWER_PREFIX = b"\x23"
BONDED_POOL = "bonded_tokens_pool"
PARAMS_KEY = b"\x51"


def validator_key(operator: bytes) -> bytes:
    return VALIDATOR_PREFIX + operator


def consensus_address(ed25519_pubkey: bytes) -> bytes:
    """CometBFT's validator address: the first 20 bytes of sha256 of the ed25519 key."""
    return hashlib.sha256(ed25519_pubkey).digest()[:20]


def consensus_index_key(ed25519_pubkey: bytes) -> bytes:
    return CONSENSUS_INDEX_PREFIX + consensus_address(ed25519_pubkey)


def last_power_key(ed25519_pubkey: bytes) -> bytes:
    return LAST_POWER_PREFIX + ed25519_pubkey
