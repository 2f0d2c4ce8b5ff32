"""x/stake store layout, under the module prefix ``stake/``.

    0x21 | operator(20)       -> cosmos.staking.v1beta1.Validator
    0x22 | consensus_addr(20) -> operator(20)
"""

from __future__ import annotations

import hashlib

MODULE_NAME = "stake"
STORE_PREFIX = b"stake/"
VALIDATOR_PREFIX = b"\x21"
CONSENSUS_INDEX_PREFIX = b"\x22"
BONDED_POOL = "bonded_tokens_pool"
BOND_DENOM = "ngonka"
POWER_REDUCTION = 10**9  # one unit of CometBFT voting power per GNK of collateral
MAX_MONIKER_LENGTH = 70


def validator_key(operator: bytes) -> bytes:
    return VALIDATOR_PREFIX + operator


def consensus_address(ed25519_pubkey: bytes) -> bytes:
    """CometBFT's validator address: the first 20 bytes of sha256 of the ed25519 key."""
    return hashlib.sha256(ed25519_pubkey).digest()[:20]


def consensus_index_key(ed25519_pubkey: bytes) -> bytes:
    return CONSENSUS_INDEX_PREFIX + consensus_address(ed25519_pubkey)
