"""x/bank store layout, under the module prefix ``bank/``.

0x00 | denom              -> total supply (decimal string)
0x02 | len(addr) | addr | denom -> balance (decimal string); absent means zero
0x01 | denom              -> cosmos.bank.v1beta1.Metadata
0x05                      -> cosmos.bank.v1beta1.Params
0x06 | denom              -> supply at genesis (decimal string)
0x07 | denom              -> minted since genesis (decimal string)
0x08 | denom              -> burned since genesis (decimal string)
"""

from __future__ import annotations

from functools import lru_cache

MODULE_NAME = "bank"
STORE_PREFIX = b"bank/"
SUPPLY_PREFIX = b"\x00"
DENOM_METADATA_PREFIX = b"\x01"
BALANCES_PREFIX = b"\x02"
PARAMS_KEY = b"\x05"
GENESIS_SUPPLY_PREFIX = b"\x06"
MINTED_PREFIX = b"\x07"
BURNED_PREFIX = b"\x08"
BASE_DENOM = "ngonka"


def address_balances_prefix(address: bytes) -> bytes:
    return BALANCES_PREFIX + bytes([len(address)]) + address


@lru_cache(maxsize=16384)
def balance_key(address: bytes, denom: str) -> bytes:
    """Cached: a send reads and writes its accounts' balances several times over (fee, spendable, transfer)."""
    return address_balances_prefix(address) + denom.encode()


def supply_key(denom: str) -> bytes:
    return SUPPLY_PREFIX + denom.encode()


def metadata_key(denom: str) -> bytes:
    return DENOM_METADATA_PREFIX + denom.encode()
