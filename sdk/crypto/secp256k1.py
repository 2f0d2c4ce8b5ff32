"""secp256k1 as Cosmos uses it: 33-byte compressed keys, 64-byte low-S r||s signatures over SHA-256."""

from __future__ import annotations

import hashlib
from functools import lru_cache

import coincurve

ORDER = coincurve.utils.GROUP_ORDER_INT
HALF_ORDER = ORDER // 2
PUBKEY_LEN = 33
SIG_LEN = 64


def _der_int(value: bytes) -> bytes:
    value = value.lstrip(b"\x00") or b"\x00"
    if value[0] & 0x80:
        value = b"\x00" + value
    return b"\x02" + bytes([len(value)]) + value


def compact_to_der(sig: bytes) -> bytes:
    body = _der_int(sig[:32]) + _der_int(sig[32:])
    return b"\x30" + bytes([len(body)]) + body


def is_low_s(sig: bytes) -> bool:
    return 0 < int.from_bytes(sig[32:], "big") <= HALF_ORDER


@lru_cache(maxsize=16384)
def verify(pubkey: bytes, message: bytes, sig: bytes) -> bool:
    """Verify a compact low-S signature of sha256(message); any malformed input is simply invalid.

    Cached: a transaction is verified at CheckTx and again in its block, and the answer is a pure
    function of the three inputs.
    """
    if len(pubkey) != PUBKEY_LEN or len(sig) != SIG_LEN or not is_low_s(sig):
        return False
    r = int.from_bytes(sig[:32], "big")
    if not 0 < r < ORDER:
        return False
    try:
        key = _parsed_key(pubkey)
        return key.verify(compact_to_der(sig), message, hasher=lambda m: hashlib.sha256(m).digest())
    except (ValueError, TypeError):
        return False


@lru_cache(maxsize=16384)
def _parsed_key(pubkey: bytes) -> coincurve.PublicKey:
    """A key parsed once: the same accounts sign tx after tx, and parsing is a third of a verify's Python cost."""
    return coincurve.PublicKey(pubkey)


class PrivateKey:
    """A signing key; signatures come out normalised to low-S by libsecp256k1."""

    def __init__(self, secret: bytes) -> None:
        self._key = coincurve.PrivateKey(secret)

    @property
    def secret(self) -> bytes:
        return self._key.secret

    @property
    def public_key(self) -> bytes:
        return self._key.public_key.format(compressed=True)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign_recoverable(message, hasher=lambda m: hashlib.sha256(m).digest())[:64]


@lru_cache(maxsize=16384)
def address_bytes(pubkey: bytes) -> bytes:
    """Cosmos account address: RIPEMD-160 of SHA-256 of the compressed key."""
    return hashlib.new("ripemd160", hashlib.sha256(pubkey).digest()).digest()
