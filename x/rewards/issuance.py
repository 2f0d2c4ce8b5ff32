"""The epoch issuance R(e) = R0 · exp(−λ · (e − 1)), in integers only, identical on every node.

Method: with λ = a/b exactly (a decimal param) and x = a(e − 1)/b ≥ 0, compute E = e^x in fixed point of
scale S = 2^256: halve x k times until y = x / 2^k < 1/2, sum the Taylor series of e^y (each term
t_{i+1} = ⌊t_i · y / (i + 1)⌋, until a term is 0), square k times (each ⌊E² / S⌋), then
R(e) = ⌊R0 · S / E⌋. Every ⌊⌋ loses less than one unit of 2^−256; the series has at most ~60 terms and
each squaring at most doubles the relative error, so E's relative error is below (60 + 2)·2^(k+1)/2^256,
about 10^−72 for any epoch the cap allows (x < 400, so k ≤ 10). For R0 ≤ 10^30 ngonka the result is the
floor of the exact value, or one less in the (astronomically rare) case the exact value lies within
10^−40 above an integer: the error is at most 1 ngonka. tests/test_rewards.py checks it against 80-digit
arithmetic.
"""

from __future__ import annotations

from fractions import Fraction

SCALE_BITS = 256
SCALE = 1 << SCALE_BITS


def exp_fixed(x: Fraction) -> int:
    """⌊e^x · 2^256⌋ up to the documented error, for x ≥ 0."""
    if x < 0:
        raise ValueError("exp_fixed takes x >= 0")
    k = 0
    while x / (1 << k) >= Fraction(1, 2):
        k += 1
    y = x / (1 << k)
    total = term = SCALE
    i = 0
    while term:
        i += 1
        term = term * y.numerator // (y.denominator * i)
        total += term
    for _ in range(k):
        total = total * total // SCALE
    return total


def epoch_issuance(initial: int, decay: Fraction, epoch: int) -> int:
    """R(epoch) in the base denom: ``initial`` · exp(−decay · (epoch − 1)), rounded down; epoch ≥ 1."""
    if epoch < 1:
        raise ValueError("issuance starts at epoch 1")
    return initial * SCALE // exp_fixed(decay * (epoch - 1))
