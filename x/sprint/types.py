"""The race's randomness, derived the same way by the chain and by every host (the client library reads it).

The seed and the sample randomness are fixed by the chain at stage boundaries from the BLS beacon (x/bls):
the aggregate signature of a certified height, which no single proposer can choose or predict. Each
(validator, host) pair samples with its own randomness, so the leaves one validator opens tell nothing about
another's, and a host cannot know at commit time which of its leaves will be opened.
"""

from __future__ import annotations

import hashlib

SEED_TAG = b"gonka/sprint/v1/seed"
RANDOMNESS_TAG = b"gonka/sprint/v1/randomness"
PAIR_TAG = b"gonka/sprint/v1/pair"
FALLBACK_TAG = b"gonka/sprint/v1/fallback"
HASH_BYTES = 32


def epoch_seed(epoch: int, beacon: bytes) -> bytes:
    """The race seed of ``epoch``: SHA-256(SEED_TAG || epoch u64 || beacon)."""
    return hashlib.sha256(SEED_TAG + epoch.to_bytes(8, "big") + beacon).digest()


def epoch_randomness(epoch: int, beacon: bytes) -> bytes:
    """The sample randomness of ``epoch``: SHA-256(RANDOMNESS_TAG || epoch u64 || beacon)."""
    return hashlib.sha256(RANDOMNESS_TAG + epoch.to_bytes(8, "big") + beacon).digest()


def fallback_beacon(chain_id: str, height: int, last_app_hash: bytes) -> bytes:
    """What stands in for the beacon on a chain without certificates (vote extensions off): the last app hash,
    known to all a block ahead, so weaker; the README says so."""
    return hashlib.sha256(FALLBACK_TAG + chain_id.encode() + height.to_bytes(8, "big") + last_app_hash).digest()


def pair_randomness(randomness: bytes, validator: bytes, host: bytes) -> bytes:
    """The randomness ``validator`` samples ``host``'s commitment with: SHA-256(PAIR_TAG || R || validator ||
    host), addresses as their 20 bytes. The ML node draws the indices from it (``/v1/sprint/verify``)."""
    return hashlib.sha256(PAIR_TAG + randomness + validator + host).digest()
