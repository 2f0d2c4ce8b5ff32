"""Draws from a beacon, pure functions of chain data that every node (and a host's program) computes the same:
shared by x/poc (which inferences are validated, by whom, a dispute's voters) and x/learning (which checkpoints
are replayed, by whom). Each caller hashes its own tag, the beacon and what is drawn into the digests.

- **selected** when ``u64(digest[0:8]) · d < n · 2⁶⁴`` for the rate p = n/d: exactly probability p (a uniform
  64-bit integer below p · 2⁶⁴, rounded up to the next integer bound);
- **by weight**: ``u256(digest) mod W`` picks a point in the cumulative weights of the candidates in address
  order, W their total: each drawn with probability weight / W (a modulo bias below 2⁻¹⁹⁰ for W < 2⁶⁴);
- **distinct**: the i-th of k drawn by weight from those not drawn yet, with the i-th digest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction


def is_selected(digest: bytes, rate: Fraction) -> bool:
    """Whether ``digest`` falls below ``rate``."""
    x = int.from_bytes(digest[:8], "big")
    return x * rate.denominator < rate.numerator << 64


def draw_by_weight(digest: bytes, weights: Mapping[bytes, int]) -> bytes | None:
    """The candidate at ``u256(digest) mod W`` in the cumulative weights, in address order (``weights``: address →
    weight; zero weights never drawn); None without candidates."""
    candidates = sorted((address, weight) for address, weight in weights.items() if weight > 0)
    total = sum(weight for _, weight in candidates)
    if total == 0:
        return None
    point = int.from_bytes(digest, "big") % total
    for address, weight in candidates:
        if point < weight:
            return address
        point -= weight
    raise AssertionError("unreachable: point < total")


def draw_distinct(digest_of: Callable[[int], bytes], weights: Mapping[bytes, int], k: int) -> list[bytes]:
    """Up to ``k`` distinct candidates, the i-th drawn by weight with ``digest_of(i)`` from those not drawn yet,
    in draw order."""
    pool, drawn = dict(weights), []
    for i in range(k):
        chosen = draw_by_weight(digest_of(i), pool)
        if chosen is None:
            break
        drawn.append(chosen)
        del pool[chosen]
    return drawn
