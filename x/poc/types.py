"""PoC V2's selection, a pure function of chain data that every node (and a host's program) computes the same
(the draws themselves are sdk/draw.py's, shared with x/learning).

An inference finished at height f is drawn with the beacon of ``f + draw_delay_blocks``: the aggregate BLS
signature of a height whose votes come after the finish, so the executor, when it answers, cannot know whether
it will be checked. From the beacon and the inference id:

- **selected** when ``u64(SHA-256(SELECT_TAG ‖ beacon ‖ id)[0:8]) · d < n · 2⁶⁴`` for the rate p = n/d: exactly
  probability p (a uniform 64-bit integer below p · 2⁶⁴, rounded up to the next integer bound);
- **validator**: ``u256(SHA-256(VALIDATOR_TAG ‖ beacon ‖ id)) mod W`` picks a point in the cumulative weights of
  the candidates (the other hosts in the validator set serving the model, in address order), W their total:
  each drawn with probability weight / W (a modulo bias below 2⁻¹⁹⁰ for W < 2⁶⁴).

A dispute's voters are drawn the same way with ``VOTER_TAG ‖ beacon ‖ id ‖ u16(i)`` for the i-th, without
replacement (each drawn candidate leaves the pool); the side holding more than half the voters' power wins.

The rate is ``p = min + (max − min) · s / (s + r)`` for reputation r and scale s: max at r = 0, (min + max) / 2 at
r = s, falling toward min; an exact fraction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from fractions import Fraction

from protogen.gonka.poc.v1 import poc_pb2
from sdk import draw
from sdk.crypto import bech32

SELECT_TAG = b"gonka/poc/v1/select"
VALIDATOR_TAG = b"gonka/poc/v1/validator"
VOTER_TAG = b"gonka/poc/v1/voter"
FALLBACK_TAG = b"gonka/poc/v1/fallback"
DECIDED = (poc_pb2.STATUS_INVALIDATED, poc_pb2.STATUS_CLEARED, poc_pb2.STATUS_UNDECIDED)
"""A dispute's ends: settled records, pruned after ``retention_blocks``."""
SCORE_SCALE = 1_000_000
"""A score is in parts per million: 1,000,000 is a perfect match."""


def compute_rate(min_rate: Fraction, max_rate: Fraction, scale: int, reputation: int) -> Fraction:
    """The chance an inference of a host with ``reputation`` is selected."""
    return min_rate + (max_rate - min_rate) * Fraction(scale, scale + reputation)


def rate_text(rate: Fraction) -> str:
    """An exact rate as ``"n/d"`` (in lowest terms)."""
    return f"{rate.numerator}/{rate.denominator}"


def is_selected(beacon: bytes, inference_id: bytes, rate: Fraction) -> bool:
    """Whether the draw of ``beacon`` selects ``inference_id`` at ``rate``."""
    return draw.is_selected(hashlib.sha256(SELECT_TAG + beacon + inference_id).digest(), rate)


def draw_validator(beacon: bytes, inference_id: bytes, weights: Mapping[bytes, int]) -> bytes | None:
    """The candidate drawn by weight (``weights``: address → weight; zero weights never drawn), None without
    candidates."""
    return draw.draw_by_weight(hashlib.sha256(VALIDATOR_TAG + beacon + inference_id).digest(), weights)


def draw_voters(beacon: bytes, inference_id: bytes, weights: Mapping[bytes, int], k: int) -> list[bytes]:
    """Up to ``k`` distinct candidates, each drawn by weight from those not drawn yet, in draw order."""
    prefix = VOTER_TAG + beacon + inference_id
    return draw.draw_distinct(lambda i: hashlib.sha256(prefix + i.to_bytes(2, "big")).digest(), weights, k)


def fallback_beacon(chain_id: str, height: int, last_app_hash: bytes) -> bytes:
    """What stands in for the beacon of ``height`` when it has no certificate (vote extensions off): a hash of the
    last app hash at the draw, weaker (a proposer could grind it); the README says so."""
    return hashlib.sha256(FALLBACK_TAG + chain_id.encode() + height.to_bytes(8, "big") + last_app_hash).digest()


def awaited(record: poc_pb2.Validation) -> list[bytes]:
    """A dispute's drawn voters that have not voted."""
    return [bech32.decode(v.voter) for v in record.votes if v.verdict == poc_pb2.VERDICT_UNSPECIFIED]


def dispute_outcome(votes: Sequence[poc_pb2.Vote]) -> poc_pb2.Status | None:
    """INVALIDATED when the voters that found a mismatch hold more than half the voters' power, CLEARED when those
    that found a match do; None while neither does (the votes sent so far cannot settle it)."""
    total = sum(vote.power for vote in votes)
    against = sum(vote.power for vote in votes if vote.verdict == poc_pb2.VERDICT_MISMATCH)
    for_it = sum(vote.power for vote in votes if vote.verdict == poc_pb2.VERDICT_MATCH)
    if 2 * against > total:
        return poc_pb2.STATUS_INVALIDATED
    if 2 * for_it > total:
        return poc_pb2.STATUS_CLEARED
    return None


def sprt_invalid(p0: Fraction, p1: Fraction, alpha: Fraction, invalidated: int, validated: int) -> bool:
    """Wald's sequential test of an invalidation rate p1 against the honest p0: the likelihood ratio of
    ``invalidated`` invalidations among ``invalidated + validated`` reaches 1/α (exact fractions)."""
    if invalidated == 0:
        return False  # the ratio is at most 1
    ratio = (p1 / p0) ** invalidated * ((1 - p1) / (1 - p0)) ** validated
    return ratio * alpha >= 1
