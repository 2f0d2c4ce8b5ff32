"""Every pseudo-random quantity of the race, derived from the epoch seed by domain-separated hashes.

Model-side randomness (weights, target) depends on the seed alone, so all nodes race the same model in
an epoch; nonce-side randomness (input tokens, output permutation) also depends on the node's public
key, so one node's nonces are worthless to another.
"""

from __future__ import annotations

import hashlib
import struct

import torch

SEED_BYTES = 32
PUBKEY_BYTES = 33
WEIGHTS_TAG = b"gonka/sprint/v1/weights"
TARGET_TAG = b"gonka/sprint/v1/target"
NONCE_TAG = b"gonka/sprint/v1/nonce"


def check_seed(seed: bytes) -> None:
    """An epoch seed is a 32-byte block hash."""
    if len(seed) != SEED_BYTES:
        raise ValueError(f"seed must be {SEED_BYTES} bytes, got {len(seed)}")


def check_pubkey(pubkey: bytes) -> bytes:
    """A node key is a 33-byte compressed secp256k1 point (prefix 02 or 03)."""
    if len(pubkey) != PUBKEY_BYTES or pubkey[0] not in (2, 3):
        raise ValueError(f"pubkey must be a {PUBKEY_BYTES}-byte compressed secp256k1 key (prefix 02 or 03)")
    return pubkey


def generator(tag: bytes, seed: bytes) -> torch.Generator:
    """A CPU generator seeded with the first 63 bits of SHA-256(tag || seed)."""
    digest = hashlib.sha256(tag + seed).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "big") >> 1)


def nonce_bytes(seed: bytes, pubkey: bytes, nonce: int, length: int) -> bytes:
    """SHAKE-256(NONCE_TAG || seed || pubkey || nonce u64) read to ``length`` bytes."""
    return hashlib.shake_256(NONCE_TAG + seed + pubkey + struct.pack(">Q", nonce)).digest(length)
