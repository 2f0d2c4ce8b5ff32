"""Which leaves a verifier samples: drawn from the commitment root and randomness that came later.

Indices are drawn with replacement, each from its own hash, so every sample independently hits an
invalid leaf with probability equal to the commitment's invalid share: the failure count is exactly
binomial. The randomness (e.g. the hash of a block after the commitment) is unknown when the prover
commits, so the prover cannot choose which leaves get checked.
"""

from __future__ import annotations

import hashlib

CHALLENGE_TAG = b"gonka/sprint/v1/challenge"


def sample_indices(root: bytes, randomness: bytes, count: int, samples: int) -> list[int]:
    """Index j = first 8 bytes of SHA-256(tag || root || randomness || j u32) mod count (bias < count/2^64)."""
    if count == 0:
        return []
    prefix = CHALLENGE_TAG + root + randomness
    return [
        int.from_bytes(hashlib.sha256(prefix + j.to_bytes(4, "big")).digest()[:8], "big") % count
        for j in range(samples)
    ]
