"""bench/simulate_poc_economy.py's building blocks against values computed by hand, so the table in bench/RESULTS.md
cannot drift silently: the validation rate p(r), the dispute's loss probabilities, the SPRT's crossing counts and
the three-in-a-row rule, the exact dynamic programme on epochs small enough to work out on paper, the profit
formula on one answer, and the Monte Carlo and the exact detection probability against the exact programme.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import simulate_poc_economy as sim  # noqa: E402

RULES = sim.Rules()
SURE = replace(RULES, catch_rate=1.0, false_mismatch_rate=0.0)
"""A verifier that never errs: a cheap answer, once selected, is always invalidated; an honest one never."""


def test_validation_rate_falls_from_max_to_min_with_reputation() -> None:
    assert sim.validation_rate(RULES, 0) == pytest.approx(0.10)
    assert sim.validation_rate(RULES, 100) == pytest.approx(0.055)
    assert sim.validation_rate(RULES, 1000) == pytest.approx(0.01 + 0.09 / 11)
    assert sim.validation_rate(RULES, 10**9) == pytest.approx(0.01, abs=1e-8)


def test_dispute_outcome_is_the_truth_unless_most_voters_err() -> None:
    assert sim.majority_probability(3, 0.5) == pytest.approx(0.5)
    assert sim.majority_probability(3, 0.1) == pytest.approx(3 * 0.01 * 0.9 + 0.001)
    assert sim.dispute_loss_probability(SURE, cheap=True) == 1.0
    assert sim.dispute_loss_probability(SURE, cheap=False) == 0.0
    # honest: the validator (f) and then two or three of the three voters (3 f² (1 − f) + f³) err
    f = 0.001
    assert sim.dispute_loss_probability(RULES, cheap=False) == pytest.approx(f * (3 * f**2 * (1 - f) + f**3))
    q = 0.999
    assert sim.dispute_loss_probability(RULES, cheap=True) == pytest.approx(q * (3 * q**2 * (1 - q) + q**3))
    assert sim.invalidation_probability(SURE, 0.3) == pytest.approx(0.3)


def test_sprt_crossing_counts() -> None:
    """ln 50 ≈ 3.912 per invalidation, ln(0.95/0.999) ≈ −0.0503 per validation, against ln 10⁶ ≈ 13.816: four
    invalidations with at most 36 validations, five with at most 114 (13.816 ≤ 5 · 3.912 − 114 · 0.0503)."""
    assert not sim.is_sprt_invalid(RULES, 3, 0)
    assert sim.is_sprt_invalid(RULES, 4, 0)
    assert sim.is_sprt_invalid(RULES, 4, 36)
    assert not sim.is_sprt_invalid(RULES, 4, 37)
    assert sim.is_sprt_invalid(RULES, 5, 114)
    assert not sim.is_sprt_invalid(RULES, 5, 115)
    assert sim.sprt_log_ratio(RULES, 1, 0) == pytest.approx(math.log(50))


def test_three_invalidations_in_a_row() -> None:
    assert sim.is_invalid(RULES, 3, 3, 10_000)
    assert not sim.is_invalid(RULES, 2, 3, 10_000)


def test_exact_one_answer_by_hand() -> None:
    """One cheap answer of a new host: selected with 10%, then invalidated surely; one invalidation is no INVALID."""
    stats = sim.exact_epoch(SURE, 1.0, 1)
    assert stats.served == 1.0
    assert stats.invalidations == pytest.approx(0.1)
    assert stats.slashed_fraction == pytest.approx(0.1 * 0.2)
    assert stats.p_invalid == 0.0
    assert stats.p_detected == pytest.approx(0.1)
    honest = sim.exact_epoch(SURE, 0.0, 1)
    econ = sim.Economy(fee=1.2, collateral=10.0, epoch_reward=5.0)
    # cheating saves 0.9 C and loses, with 10%, the payment (1.2) and a fifth of the collateral (2)
    assert sim.profit_difference(econ, stats, honest) == pytest.approx((0.9 - 0.1 * (1.2 + 2.0), 0.0))
    assert sim.expected_profit(econ, honest) == pytest.approx((0.2 + 5.0, 0.0))


def test_exact_every_answer_checked_stops_at_the_third() -> None:
    """Every answer selected (min = max = 100%) and cheap: invalidated three times in a row, INVALID at the third
    answer, routed nothing after; slashed 1 − 0.8³ of the collateral; the reward lost."""
    always = replace(SURE, min_validation_rate=1.0, max_validation_rate=1.0)
    stats = sim.exact_epoch(always, 1.0, 5)
    assert (stats.served, stats.invalidations, stats.p_invalid) == pytest.approx((3.0, 3.0, 1.0))
    assert stats.slashed_fraction == pytest.approx(1 - 0.8**3)
    econ = sim.Economy(fee=1.2, collateral=100.0, epoch_reward=50.0)
    # 3 answers served, all refunded, at 0.1 C each; 48.8 slashed; no reward
    assert sim.expected_profit(econ, stats)[0] == pytest.approx(-0.3 - 48.8)
    mc = sim.simulate_epoch(always, 1.0, 5, 0, 200, np.random.default_rng(0))
    assert (mc.served, mc.invalidations, mc.p_invalid) == (3.0, 3.0, 1.0)


def test_monte_carlo_and_detection_agree_with_the_exact_programme() -> None:
    exact = sim.exact_epoch(RULES, 0.3, 40)
    mc = sim.simulate_epoch(RULES, 0.3, 40, 0, 20_000, np.random.default_rng(7))
    for field, tol in (("served", 0.3), ("invalidations", 0.03), ("slashed_fraction", 0.01), ("p_detected", 0.01)):
        assert getattr(mc, field) == pytest.approx(getattr(exact, field), abs=tol), field
    counts = sim.selection_counts(RULES, [40], 0)[40]
    assert sim.undetected_probability(RULES, 0.3, counts) == pytest.approx(1 - exact.p_detected, rel=1e-9)
    # the same seed, the same figures
    again = sim.simulate_epoch(RULES, 0.3, 40, 0, 20_000, np.random.default_rng(7))
    assert np.array_equal(mc.profit_terms, again.profit_terms)


def test_honest_host_without_false_mismatches_is_never_invalidated() -> None:
    stats = sim.simulate_epoch(SURE, 0.0, 2_000, 0, 50, np.random.default_rng(1))
    assert (stats.served, stats.invalidations, stats.p_invalid) == (2_000.0, 0.0, 0.0)


def test_tables_print() -> None:
    args = argparse.Namespace(
        answers=300, fee=1.2, collateral=30.0, reward=60.0, catch_rate=0.999, false_mismatch=0.001,
        start_reputation=0, trials=40, seed=1, volumes=[100], only_default=True,
    )  # fmt: skip
    text = sim.run(args)
    assert "| 30% |" in text and "n = 300" in text


def test_fewest_answers_for_detection_by_hand() -> None:
    """Every answer checked, 30% cheap and always caught: P(detected in n) = 1 − 0.7ⁿ ≥ 0.9 from n = 7 (0.7⁶ ≈ 0.118,
    0.7⁷ ≈ 0.082)."""
    always = replace(SURE, min_validation_rate=1.0, max_validation_rate=1.0)
    assert sim.volume_for_detection(always, 0.3, 0, 0.9) == 7
    counts = sim.selection_counts(always, [6, 7], 0)
    assert sim.undetected_probability(always, 0.3, counts[6]) == pytest.approx(0.7**6)
