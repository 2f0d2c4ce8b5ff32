"""x/auth store layout, under the module prefix ``auth/``.

0x01 | addr(20)        -> cosmos.auth.v1beta1.BaseAccount | ModuleAccount (packed in Any)
0x02                   -> next account number (8 bytes, big-endian)
0x03                   -> cosmos.auth.v1beta1.Params
"""

from __future__ import annotations

from sdk import address as sdk_address

MODULE_NAME = "auth"
STORE_PREFIX = b"auth/"
ACCOUNT_PREFIX = b"\x01"
NEXT_ACCOUNT_NUMBER_KEY = b"\x02"
PARAMS_KEY = b"\x03"
FEE_COLLECTOR = "fee_collector"
MINTER = "minter"
BURNER = "burner"
STAKING = "staking"
"""Module account permissions, as the Cosmos SDK names them."""


def account_key(address: bytes) -> bytes:
    return ACCOUNT_PREFIX + address


module_address = sdk_address.module_address
"""A module account's address, sha256(name)[:20] (defined in sdk: the framework's authority is one too)."""
