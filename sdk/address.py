"""Account addresses in messages and queries: bech32 text to bytes, or ``ErrInvalidAddress`` naming the field."""

from __future__ import annotations

from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress


def parse_address(text: str, what: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"{what}: {exc}") from None
