"""x/bls store layout, under the module prefix ``bls/``.

    0x21 | operator(20)        -> public_key (48 bytes, compressed G1): the host's registered BLS key
    0x22 | public_key(48)      -> operator(20): the reverse index (a key belongs to one host at most)
"""

from __future__ import annotations

MODULE_NAME = "bls"
STORE_PREFIX = b"bls/"
KEY_PREFIX = b"\x21"
OPERATOR_INDEX_PREFIX = b"\x22"


def key_key(operator: bytes) -> bytes:
    return KEY_PREFIX + operator


def operator_index_key(public_key: bytes) -> bytes:
    return OPERATOR_INDEX_PREFIX + public_key
