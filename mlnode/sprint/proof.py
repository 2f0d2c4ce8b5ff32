"""A race proof: a nonce and its distance to the target, in the fixed-point unit every node hashes.

Distances are carried as integers (``DISTANCE_SCALE`` units per 1.0) so that leaves, commitments and
thresholds are exact bytes, independent of how any node prints or rounds floats.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

DISTANCE_SCALE = 10**9
"""Fixed-point units per unit of Euclidean distance (distances between unit vectors lie in [0, 2])."""

U64_MAX = 2**64 - 1
LEAF_TAG = b"\x00gonka/sprint/v1/leaf"


@dataclass(frozen=True, order=True)
class Proof:
    nonce: int
    distance: int
    """Fixed-point distance: round(distance * DISTANCE_SCALE)."""


def to_fixed(distance: float) -> int:
    return round(distance * DISTANCE_SCALE)


def leaf_hash(proof: Proof) -> bytes:
    """SHA-256(LEAF_TAG || nonce u64 || distance u64), big-endian."""
    return hashlib.sha256(LEAF_TAG + struct.pack(">QQ", proof.nonce, proof.distance)).digest()
