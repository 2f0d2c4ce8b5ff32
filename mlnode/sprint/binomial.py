"""How many leaves to sample, and how many failures mean fraud: exact binomial tails, no floats.

Each sample fails independently (challenge.py), so the failure count of n samples is Binomial(n, p):
p ≤ p0 for an honest node (p0 allows for cross-hardware float drift), p ≥ f for a node whose invalid
share is f. Flag at k* failures, the smallest k with P[Bin(n, p0) ≥ k] ≤ α; choose the smallest n at
which P[Bin(n, f) < k*] ≤ β. All sums are over integers (math.comb) and compared as fractions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb


def tail_numerators(n: int, p: Fraction) -> list[int]:
    """N_k with P[Bin(n, p) ≥ k] = N_k / q^n for k = 0..n+1, where p = a/q."""
    a, q = p.numerator, p.denominator
    tails = [0] * (n + 2)
    for k in range(n, -1, -1):
        tails[k] = tails[k + 1] + comb(n, k) * a**k * (q - a) ** (n - k)
    return tails


def upper_tail(n: int, p: Fraction, k: int) -> Fraction:
    """P[Bin(n, p) ≥ k]."""
    return Fraction(tail_numerators(n, p)[min(max(k, 0), n + 1)], p.denominator**n)


def threshold(n: int, p0: Fraction, alpha: Fraction) -> int:
    """k*: the fewest failures that an honest node reaches with probability ≤ α."""
    tails, scale = tail_numerators(n, p0), p0.denominator**n
    return next(k for k in range(n + 2) if tails[k] * alpha.denominator <= alpha.numerator * scale)


@dataclass(frozen=True)
class SamplePlan:
    samples: int
    """n: leaves sampled (with replacement) per verification."""
    threshold: int
    """k*: flag as fraud at this many failures."""
    false_flag: Fraction
    """P[Bin(n, p0) ≥ k*]: chance an honest node at mismatch rate p0 is flagged."""
    miss: Fraction
    """P[Bin(n, f) < k*]: chance a node with invalid share f escapes."""


@cache
def plan_samples(p0: Fraction, alpha: Fraction, f: Fraction, beta: Fraction) -> SamplePlan:
    """The smallest n whose k* keeps honest flags ≤ α and misses at invalid share f ≤ β."""
    if not 0 <= p0 < f <= 1:
        raise ValueError("need 0 ≤ p0 < f ≤ 1")
    n = 1
    while True:
        k = threshold(n, p0, alpha)
        miss = 1 - upper_tail(n, f, k)
        if miss <= beta:
            return SamplePlan(n, k, upper_tail(n, p0, k), miss)
        n += 1
