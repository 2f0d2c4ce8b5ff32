"""Account addresses in messages and queries: bech32 text to bytes, or ``ErrInvalidAddress`` naming the field;
and module account addresses."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress


def parse_address(text: str, what: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"{what}: {exc}") from None


@lru_cache(maxsize=256)
def module_address(name: str) -> bytes:
    """A module account's address as the Cosmos SDK derives it: sha256(name)[:20]. Cached: every fee
    goes to the fee collector's, and the modules are few."""
    return hashlib.sha256(name.encode()).digest()[:20]


def consensus_address(ed25519_pubkey: bytes) -> bytes:
    """CometBFT's validator address: the first 20 bytes of sha256 of the ed25519 consensus key."""
    return hashlib.sha256(ed25519_pubkey).digest()[:20]
