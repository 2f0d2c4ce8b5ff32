"""The pair randomness a validator samples a host's commitment with, from bech32 addresses: what a host's program
needs to serve openings and to check another host's (host/README.md, the race duties). The derivation itself is
the chain's (``x.sprint.types``), so host and chain cannot drift apart."""

from __future__ import annotations

from sdk.crypto import bech32
from x.sprint.types import pair_randomness as _pair_randomness


def pair_randomness(randomness: bytes, validator: str, host: str) -> bytes:
    """SHA-256("gonka/sprint/v1/pair" ‖ R ‖ validator ‖ host), the addresses as their 20 bytes; ValueError for an
    address that does not decode."""
    return _pair_randomness(randomness, bech32.decode(validator), bech32.decode(host))
