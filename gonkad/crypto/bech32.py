"""Bech32 addresses with the chain's prefixes."""

from __future__ import annotations

import bech32 as _bech32

ACCOUNT_PREFIX = "gonka"
VALOPER_PREFIX = "gonkavaloper"


def encode(raw: bytes, prefix: str = ACCOUNT_PREFIX) -> str:
    data = _bech32.convertbits(raw, 8, 5)
    assert data is not None
    return _bech32.bech32_encode(prefix, data)


def decode(address: str, prefix: str = ACCOUNT_PREFIX) -> bytes:
    """Decode and check prefix and checksum; ValueError with a one-line reason otherwise."""
    hrp, data = _bech32.bech32_decode(address)
    if hrp is None or data is None:
        raise ValueError(f"invalid address {address!r}: bad bech32 checksum or characters")
    if hrp != prefix:
        raise ValueError(f"invalid address {address!r}: prefix {hrp!r}, expected {prefix!r}")
    raw = _bech32.convertbits(data, 5, 8, False)
    if raw is None or len(raw) not in (20, 32):
        raise ValueError(f"invalid address {address!r}: wrong length")
    return bytes(raw)
