"""TEST ONLY: how a faulty host races (``SprintConfig.fault``), so a localnet can see the chain catch it. A real
host never sets a fault: the chain slashes and jails a host the validators find cheating."""

from __future__ import annotations

import hashlib

from host.sprint.config import Fault
from host.sprint.node import Proof
from sdk.crypto import secp256k1

INFLATION = 5
"""``inflate`` adds one fabricated leaf per this many real proofs (20% more leaves)."""
FABRICATED_BASE = 1 << 62
"""Fabricated nonces start here, far above any raced nonce, so the list stays strictly increasing as the race
goes on; their paths check, their recomputed distances do not."""
BORROWED_KEY = secp256k1.PrivateKey(hashlib.sha256(b"gonka/test/sprint/borrowed-key").digest())
"""``borrow`` races with this key's pubkey, not the host's: proofs the chain's key does not reproduce."""


def race_pubkey(own: bytes, fault: Fault | None) -> bytes:
    """The 33-byte key the host's nonces are bound to: its own, unless it borrows."""
    return BORROWED_KEY.public_key if fault == "borrow" else own


def committed_list(proofs: list[Proof], fault: Fault | None, r_target: int) -> list[Proof]:
    """What the host commits to: its proofs, and, when it inflates, fabricated leaves with distances just under
    r_target appended (20% of the real ones, rounded up)."""
    if fault != "inflate" or not proofs:
        return list(proofs)
    extra = -(-len(proofs) // INFLATION)
    return [*proofs, *(Proof(FABRICATED_BASE + i, r_target - 1) for i in range(extra))]
