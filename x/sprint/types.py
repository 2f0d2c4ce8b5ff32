"""The race's randomness, derived the same way by the chain and by every host (the client library reads it).

The seed and the sample randomness are fixed by the chain at stage boundaries from the BLS beacon (x/bls):
the aggregate signature of a certified height, which no single proposer can choose or predict. Each
(validator, host) pair samples with its own randomness, so the leaves one validator opens tell nothing about
another's, and a host cannot know at commit time which of its leaves will be opened.
"""

from __future__ import annotations

import hashlib

from protogen.gonka.sprint.v1 import sprint_pb2

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


# --- the epoch's summary (README, "The epoch's proof") ----------------------------------------------------

SUMMARY_TAG = b"gonka/sprint/v1/epoch-summary"
SUMMARY_EXTRA = "sprint/epoch-summary"
"""The name of the extra (x/bls) under which a height's votes sign an epoch summary's hash."""


def host_line(host: bytes, weight: int, work_root: bytes, inferences: int, tokens: int) -> bytes:
    """One host's line, the leaf of the summary's hosts root: ``host(20) ‖ u64(weight) ‖ u16(len(work_root)) ‖
    work_root ‖ u64(inferences) ‖ u64(tokens)``."""
    if len(host) != 20 or len(work_root) > 0xFFFF:
        raise ValueError("a host line's host must be 20 bytes")
    return (
        host
        + weight.to_bytes(8, "big")
        + len(work_root).to_bytes(2, "big")
        + work_root
        + inferences.to_bytes(8, "big")
        + tokens.to_bytes(8, "big")
    )


def summary_hash(
    epoch: int, host_count: int, hosts_root: bytes, total_weight: int, total_inferences: int, total_tokens: int
) -> bytes:
    """SHA-256(SUMMARY_TAG ‖ u64(epoch) ‖ u32(host_count) ‖ hosts_root ‖ u64(total_weight) ‖
    u64(total_inferences) ‖ u64(total_tokens)): what the votes sign. The hosts enter through their root, so one
    host's line is proven with log2(hosts) hashes."""
    return hashlib.sha256(
        SUMMARY_TAG
        + epoch.to_bytes(8, "big")
        + host_count.to_bytes(4, "big")
        + hosts_root
        + total_weight.to_bytes(8, "big")
        + total_inferences.to_bytes(8, "big")
        + total_tokens.to_bytes(8, "big")
    ).digest()


def summary_digest(summary: sprint_pb2.EpochSummary) -> bytes:
    """``summary_hash`` of a summary record: the chain's and the light client's one way to read it."""
    return summary_hash(
        summary.epoch,
        summary.host_count,
        summary.hosts_root,
        summary.total_weight,
        summary.total_inferences,
        summary.total_tokens,
    )
