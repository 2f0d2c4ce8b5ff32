"""The chain's verdict on one validation: fraud when the failures reach the binomial threshold k*(n).

A validator samples n leaves (with replacement) of a commitment; an honest host fails each with probability
at most p0 (float drift on other hardware), so the failure count of an honest host is at most Binomial(n, p0).
k*(n) is the fewest failures an honest host reaches with probability ≤ α:

    k*(n) = min { k : Σ_{i ≥ k} C(n, i) p0^i (1 − p0)^(n − i) ≤ α }

With p0 = a/q and α = b/d this is an integer comparison: d · Σ_{i ≥ k} C(n, i) a^i (q − a)^(n − i) ≤ b · q^n.
No floats: every node computes the same k*. It is the same rule as the ML node's (mlnode/sprint/binomial.py),
computed here from the chain's params.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb


@lru_cache(maxsize=64)
def fraud_threshold(samples: int, p0: Fraction, alpha: Fraction) -> int:
    """k*(n), counting up: the tail from k is q^n less the terms below k, so only k* terms are summed."""
    a, q = p0.numerator, p0.denominator
    whole = q**samples
    bound = alpha.numerator * whole
    below = 0
    for k in range(samples + 1):
        if (whole - below) * alpha.denominator <= bound:
            return k
        below += comb(samples, k) * a**k * (q - a) ** (samples - k)
    return samples + 1


def is_fraud(samples: int, failures: int, p0: Fraction, alpha: Fraction) -> bool:
    return failures >= fraud_threshold(samples, p0, alpha)
