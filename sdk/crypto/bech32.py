"""Bech32 (BIP-173) addresses with the chain's prefixes.

Addresses are decoded on every message and encoded in every event, so both directions are cached:
they are pure functions of their input.
"""

from __future__ import annotations

from functools import lru_cache

ACCOUNT_PREFIX = "gonka"
VALOPER_PREFIX = "gonkavaloper"
VALCONS_PREFIX = "gonkavalcons"
"""A validator's consensus address (sha256 of its ed25519 key, first 20 bytes), as CometBFT names it."""
CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_INDEX = {c: i for i, c in enumerate(CHARSET)}
_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
MAX_LENGTH = 90


def _polymod(values: list[int]) -> int:
    chk = 1
    for v in values:
        top = chk >> 25
        chk = ((chk & 0x1FFFFFF) << 5) ^ v
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _GEN[i]
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert(data: bytes | list[int], from_bits: int, to_bits: int, pad: bool) -> list[int] | None:
    acc = bits = 0
    out = []
    maxv = (1 << to_bits) - 1
    for value in data:
        acc = (acc << from_bits) | value
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (to_bits - bits)) & maxv)
    elif bits >= from_bits or (acc << (to_bits - bits)) & maxv:
        return None
    return out


@lru_cache(maxsize=1 << 16)
def encode(raw: bytes, prefix: str = ACCOUNT_PREFIX) -> str:
    data = _convert(raw, 8, 5, True)
    assert data is not None
    polymod = _polymod(_hrp_expand(prefix) + data + [0] * 6) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return prefix + "1" + "".join(CHARSET[d] for d in data + checksum)


@lru_cache(maxsize=1 << 16)
def decode(address: str, prefix: str = ACCOUNT_PREFIX) -> bytes:
    """Decode and check prefix and checksum; ValueError with a one-line reason otherwise."""
    invalid = f"invalid address {address!r}"
    if not isinstance(address, str) or len(address) > MAX_LENGTH or address.lower() != address:
        raise ValueError(f"{invalid}: not a lower-case bech32 string")
    hrp, sep, rest = address.rpartition("1")
    if not sep or not hrp or len(rest) < 6 or any(c not in _INDEX for c in rest):
        raise ValueError(f"{invalid}: bad bech32 checksum or characters")
    data = [_INDEX[c] for c in rest]
    if _polymod(_hrp_expand(hrp) + data) != 1:
        raise ValueError(f"{invalid}: bad bech32 checksum or characters")
    if hrp != prefix:
        raise ValueError(f"{invalid}: prefix {hrp!r}, expected {prefix!r}")
    raw = _convert(data[:-6], 5, 8, False)
    if raw is None or len(raw) not in (20, 32):
        raise ValueError(f"{invalid}: wrong length")
    return bytes(raw)
