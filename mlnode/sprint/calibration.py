"""r_target: the radius around the target unit vector holding ``target_rate`` of the unit sphere.

Each nonce's output is permuted by its own pseudo-random permutation before it is normalised, which
spreads the model's output geometry over all coordinates; measured (README), the distance to the target
then follows the law of a uniformly random unit vector. So r_target is analytic: a function of
(dim, target_rate) only, never of weights or of any node's float results. It is computed with operations
IEEE-754 rounds identically on every platform (+, −, ×, ÷, sqrt, and math.fsum's exact sum), never with
libm's transcendental functions, so every node derives the same integer.
"""

from __future__ import annotations

import math

import numpy as np

from mlnode.sprint.proof import DISTANCE_SCALE

SIMPSON_PANELS = 4096


def r_target(dim: int, target_rate: float) -> int:
    """Largest fixed-point radius r with P(distance < r) ≤ target_rate, by bisection on the integers."""
    lo, hi = 0, 2 * DISTANCE_SCALE
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if distance_cdf(dim, mid) <= target_rate:
            lo = mid
        else:
            hi = mid
    return lo


def distance_cdf(dim: int, radius: int) -> float:
    """P(|u − t| < radius) for u uniform on the unit sphere and fixed unit t: the cap cos ≥ 1 − r²/2."""
    return cap_fraction(dim, 1.0 - radius * radius / (2 * DISTANCE_SCALE**2))


def cap_fraction(dim: int, cos_threshold: float) -> float:
    """P(⟨u, t⟩ ≥ c) = ∫_c^1 (1 − x²)^((dim−3)/2) dx / ∫_−1^1 (1 − x²)^((dim−3)/2) dx."""
    return _integral(dim, cos_threshold) / _integral(dim, -1.0)


def _integral(dim: int, lower: float) -> float:
    """Composite Simpson of (1 − x²)^((dim−3)/2) over [lower, 1]."""
    panels = SIMPSON_PANELS
    x = lower + (1.0 - lower) * (np.arange(panels + 1) / panels)
    values = _power(np.sqrt(np.maximum(1.0 - x * x, 0.0)), dim - 3)
    weights = np.full(panels + 1, 2.0)
    weights[1::2], weights[0], weights[-1] = 4.0, 1.0, 1.0
    return math.fsum((values * weights).tolist()) * (1.0 - lower) / (3 * panels)


def _power(base: np.ndarray, exponent: int) -> np.ndarray:
    """base ** exponent by repeated squaring: a fixed sequence of multiplications (np.power may use libm)."""
    result = np.ones_like(base)
    while exponent:
        if exponent & 1:
            result = result * base
        base = base * base
        exponent >>= 1
    return result
