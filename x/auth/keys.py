"""x/auth store layout, under the module prefix ``auth/``.

    0x01 | addr(20)        -> cosmos.auth.v1beta1.BaseAccount | ModuleAccount (packed in Any)
    0x02                   -> next account number (8 bytes, big-endian)
    0x03                   -> cosmos.auth.v1beta1.Params
"""

from __future__ import annotations

import hashlib

MODULE_NAME = "auth"
STORE_PREFIX = b"auth/"
ACCOUNT_PREFIX = b"\x01"
NEXT_ACCOUNT_NUMBER_KEY = b"\x02"
PARAMS_KEY = b"\x03"
FEE_COLLECTOR = "fee_collector"


def account_key(address: bytes) -> bytes:
    return ACCOUNT_PREFIX + address


def module_address(name: str) -> bytes:
    """Module account address as the Cosmos SDK derives it: sha256(name)[:20]."""
    return hashlib.sha256(name.encode()).digest()[:20]
