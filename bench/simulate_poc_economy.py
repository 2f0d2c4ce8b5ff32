"""PoC V2's economy over one epoch (issue 26): does a host that answers a fraction c of its inferences cheaply
(at a tenth of the compute) earn less in expectation than an honest host, for every c?

The rules are x/poc's, as plain data in ``Rules`` below; the money is ``Economy``. One epoch of one host:

- each answer it serves is selected for validation with p(r) = min + (max − min)·s/(s + r), r its reputation
  (inferences validated since its last invalidation; a new host has r = 0, so p = 10%);
- a selected honest answer is flagged by the validator with probability f (a false mismatch), a cheap one with
  probability q; a flag opens a dispute among k more validators, each flagging with the same f or q, and the
  side with more than half of the votes wins (an honest majority: the truth wins unless most voters err);
- a dispute the executor wins counts as a validation (its reputation grows); validation is immediate (the
  chain's one-block draw delay and 20-block window change no count);
- the executor losing a dispute has the inference INVALIDATED: its payment is refunded to the requester,
  ``dispute_slash_fraction`` of its current collateral is slashed, its reputation falls to 0;
- it is INVALID after ``max_consecutive_invalidations`` invalidations in a row, or when the SPRT on the epoch's
  counts crosses 1/α; an INVALID host is routed nothing more in the epoch and loses its epoch reward.

Why the model is cheap to compute: an answer's validation outcome (invalidated or validated) does not depend
on the reputation, only on whether the answer was cheap, so the outcome of each selected answer is an
independent draw with probability π(c) of invalidation; the reputation only sets how many answers pass
between two selections. So:

- P(at least one invalidation in n answers) = Σ_k P(k selections in n answers, r rising by one at each) ·
  (1 − π)^k, exact, from one pass over the answers shared by every c (``selection_counts``);
- the rest (answers served before INVALID, invalidations, slashes, INVALID) comes from a seeded Monte Carlo
  over selection events, each trial jumping from one selection to the next with a geometric gap
  (``simulate_epoch``), with 95% confidence intervals; ``exact_epoch`` is the same model by dynamic
  programming over the answers (state: reputation, invalidations in a row, counts), exact, for small n;
- the compute spent is C per honest answer and C/10 per cheap one; by Wald's identity the expected number of
  cheap answers among those served is c · E[served] (each answer is cheap independently of what came before),
  so only served answers need simulating. Collateral, fee and reward change no decision of the model, so one
  simulation per c serves every fee, collateral and reward (``expected_profit``).

Profit over the epoch = payments kept − compute − slashes + the epoch reward (lost when INVALID); the table
reports cheating − honest for each c (negative: cheating does not pay).

    .venv/bin/python bench/simulate_poc_economy.py                     # the tables in bench/RESULTS.md
    .venv/bin/python bench/simulate_poc_economy.py --fee 2 --collateral 1000 --reward 0 --trials 4000
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Rules:
    """x/poc's rules at issue 26's defaults: what the chain does with every finished inference."""

    min_validation_rate: float = 0.01
    """The rate a long clean record falls toward (the seeds' 1%)."""
    max_validation_rate: float = 0.10
    """The rate of a host with no record, and after each invalidation (the seeds' 10%)."""
    reputation_scale: float = 100.0
    """The reputation at which the rate is halfway between the two (5.5% at r = 100)."""
    false_mismatch_rate: float = 0.001
    """f: a validator flags an honest answer (the verifier's calibration bound)."""
    catch_rate: float = 0.999
    """q: a validator flags a cheap answer (the verifier's calibration goal)."""
    dispute_voters: int = 3
    """k: further validators who re-execute a disputed inference and vote, equal weights."""
    dispute_slash_fraction: float = 0.2
    """Of the loser's current collateral, each time (the seeds' 20%)."""
    max_consecutive_invalidations: int = 3
    """That many invalidations in a row make the host INVALID."""
    sprt_p0: float = 0.001
    """H0 invalidation rate of an honest host."""
    sprt_p1: float = 0.05
    """H1 invalidation rate of a cheating host."""
    sprt_alpha: float = 1e-6
    """INVALID when the likelihood ratio (p1/p0)^inv · ((1−p1)/(1−p0))^val reaches 1/α."""


@dataclass(frozen=True)
class Economy:
    """One host's money for one epoch, in units of C (the compute cost of one honest answer). The seeds give no
    fee, collateral, reward or volume; these defaults are assumptions (``SOURCES`` says which and why)."""

    fee: float = 1.2
    """P: payment per answer (assumption: a 20% margin over compute)."""
    compute_cost: float = 1.0
    """C: one honest answer's compute (the unit)."""
    cheap_cost_ratio: float = 0.1
    """A cheap answer costs this fraction of C (issue 26)."""
    answers_per_epoch: int = 86_400
    """n: answers one host serves in an epoch (assumption: one a second through a one-day epoch)."""
    collateral: float = 8_640.0
    """K (assumption: a tenth of the host's compute bill for one epoch, 0.1 · n · C)."""
    epoch_reward: float = 17_280.0
    """R: the host's share of the epoch reward (assumption: equal to its fee margin, (P − C) · n)."""
    start_reputation: int = 0
    """r at the epoch's start: 0 is a new host (p = 10%); a large value is a long honest record (p → 1%)."""


SOURCES = (
    "- Rules (p(r) with 1%/10%/s = 100, f, q, k = 3, 20% slash, 3 in a row, SPRT p0/p1/α): issue 26; the 1–10%"
    " sampling and the 20% of the stake lost in a dispute are the seeds' (003, PoC V2 paragraph); the"
    " validation rates and reputation scale are x/poc's defaults (x/poc/params.py, being built).",
    "- n = 86,400 answers per host per epoch: ASSUMPTION. The seeds give no network volume. The epoch is the"
    " project's x/epochs default (17,280 blocks of 5 s = one day, x/epochs/params.py, 'mainnet-like'); one answer"
    " a second per host (an 8×H100 host, the seeds' cluster, batching a large model) gives 86,400.",
    "- P = 1.2 C: ASSUMPTION (the seeds give no fee per token; a 20% margin), and P = 2 C, 5 C to test it.",
    "- K = 0.1 · n · C = 8,640 C: ASSUMPTION. The project's x/stake backs 80% of weight with 1 GNK per unit"
    " (x/stake/params.py), but neither the seeds nor the project price GNK against compute.",
    "- R = (P − C) · n = 17,280 C: ASSUMPTION (the epoch reward equal to the host's honest fee margin; the"
    " project's x/rewards mints 323,000 GNK in epoch 1, x/rewards/params.py, again with no price against"
    " compute). R = 0 is shown too: the worst case for the rules.",
    "- A cheap answer costs C/10: issue 26.",
)


# --- the rules, one function each -------------------------------------------------------------------------


def validation_rate(rules: Rules, reputation: np.ndarray | float) -> np.ndarray | float:
    """p(r) = min + (max − min)·s/(s + r): high for a host with no record, so a new or just-caught host is
    checked often and a long clean record is checked least."""
    s = rules.reputation_scale
    return rules.min_validation_rate + (rules.max_validation_rate - rules.min_validation_rate) * s / (s + reputation)


def majority_probability(k: int, x: float) -> float:
    """P(more than half of k independent voters each do something with probability x)."""
    return sum(math.comb(k, i) * x**i * (1 - x) ** (k - i) for i in range(k // 2 + 1, k + 1))


def dispute_loss_probability(rules: Rules, cheap: bool) -> float:
    """P(a selected answer ends INVALIDATED): the validator flags it, then the majority of the voters does.
    An honest answer is lost only if the validator and most voters all err: f · P(most of k err)."""
    x = rules.catch_rate if cheap else rules.false_mismatch_rate
    return x * majority_probability(rules.dispute_voters, x)


def invalidation_probability(rules: Rules, cheat_fraction: float) -> float:
    """π(c): a selected answer of a host cheating on a fraction c is invalidated (the answer is cheap with
    probability c, independently of everything before)."""
    return cheat_fraction * dispute_loss_probability(rules, True) + (1 - cheat_fraction) * dispute_loss_probability(
        rules, False
    )


def sprt_log_ratio(rules: Rules, invalidated: int, validated: int) -> float:
    """log of (p1/p0)^inv · ((1−p1)/(1−p0))^val: each invalidation raises it, each validation lowers it."""
    return invalidated * math.log(rules.sprt_p1 / rules.sprt_p0) + validated * math.log(
        (1 - rules.sprt_p1) / (1 - rules.sprt_p0)
    )


def is_sprt_invalid(rules: Rules, invalidated: int, validated: int) -> bool:
    """The SPRT says INVALID: the ratio reached 1/α."""
    return sprt_log_ratio(rules, invalidated, validated) >= math.log(1 / rules.sprt_alpha)


def is_invalid(rules: Rules, in_a_row: int, invalidated: int, validated: int) -> bool:
    """INVALID after this invalidation: too many in a row, or the SPRT crossed."""
    return in_a_row >= rules.max_consecutive_invalidations or is_sprt_invalid(rules, invalidated, validated)


# --- one epoch's statistics -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochStats:
    """What one epoch of a host's strategy gives: means over Monte Carlo trials, or exact values. ``profit_terms``
    holds each trial's (served, invalidations, slashed fraction, INVALID), so that a profit's standard error can
    be taken for any fee, collateral and reward without simulating again."""

    cheat_fraction: float
    served: float
    """E[answers served]: n, or fewer when INVALID stops routing."""
    invalidations: float
    """E[invalidations] (each one refunded and slashed)."""
    slashed_fraction: float
    """E[1 − (1 − slash)^invalidations]: the share of the collateral slashed."""
    p_invalid: float
    """P(INVALID within the epoch)."""
    p_detected: float
    """P(at least one invalidation within the epoch)."""
    trials: int = 0
    """0: exact."""
    profit_terms: np.ndarray | None = None


def simulate_epoch(
    rules: Rules, cheat_fraction: float, answers: int, start_reputation: int, trials: int, rng: np.random.Generator
) -> EpochStats:
    """Monte Carlo over selection events: each trial draws, chunk by chunk, which selected answers are
    invalidated, its reputation before each (reset at invalidations), the gap in answers to each (geometric with
    p(r)), and stops at the first INVALID or when the epoch's answers run out. Vectorized over trials."""
    pi = invalidation_probability(rules, cheat_fraction)
    llr_inv = math.log(rules.sprt_p1 / rules.sprt_p0)
    llr_val = math.log((1 - rules.sprt_p1) / (1 - rules.sprt_p0))
    bound = math.log(1 / rules.sprt_alpha)
    t = np.zeros(trials, np.int64)  # answers up to and including the last selected one
    rep = np.full(trials, start_reputation, np.int64)
    in_a_row = np.zeros(trials, np.int64)
    inv = np.zeros(trials, np.int64)
    val = np.zeros(trials, np.int64)
    served = np.zeros(trials, np.float64)
    invalidations = np.zeros(trials, np.int64)
    invalid = np.zeros(trials, bool)
    active = np.arange(trials)
    chunk = 32
    while active.size:
        a = active.size
        cols = np.arange(chunk)
        # the next `chunk` selected answers of each active trial: invalidated or validated
        is_inv = rng.random((a, chunk)) < pi
        is_val = ~is_inv
        vals_incl = np.cumsum(is_val, axis=1)
        vals_excl = vals_incl - is_val
        # reputation before each: validations since the last invalidation in the chunk, else since its start
        last_inv = np.maximum.accumulate(np.where(is_inv, cols, -1), axis=1)
        last_inv_before = np.concatenate([np.full((a, 1), -1), last_inv[:, :-1]], axis=1)
        since = np.take_along_axis(vals_incl, np.maximum(last_inv_before, 0), axis=1)
        r_before = np.where(last_inv_before < 0, rep[active, None] + vals_excl, vals_excl - since)
        gaps = rng.geometric(validation_rate(rules, r_before))  # answers from one selection to the next
        at = t[active, None] + np.cumsum(gaps, axis=1)
        inv_cum = inv[active, None] + np.cumsum(is_inv, axis=1)
        val_cum = val[active, None] + vals_incl
        # at an invalidation: how many in a row end there (carrying the previous chunk's run)
        last_val = np.maximum.accumulate(np.where(is_val, cols, -1), axis=1)
        run = np.where(last_val < 0, in_a_row[active, None] + cols + 1, cols - last_val)
        bad = is_inv & ((run >= rules.max_consecutive_invalidations) | (inv_cum * llr_inv + val_cum * llr_val >= bound))
        out = at > answers  # the epoch's answers ran out before this selection
        stop = bad | out
        stopped = stop.any(axis=1)
        first = np.argmax(stop, axis=1)
        rows = np.arange(a)
        ended = stopped & out[rows, first]
        caught = stopped & ~out[rows, first]
        idx = active[ended]
        served[idx] = answers
        invalidations[idx] = inv_cum[rows[ended], first[ended]] - is_inv[rows[ended], first[ended]]
        idx = active[caught]
        served[idx] = at[rows[caught], first[caught]]
        invalidations[idx] = inv_cum[rows[caught], first[caught]]
        invalid[idx] = True
        go = ~stopped  # carry the state at the chunk's end
        idx = active[go]
        t[idx] = at[go, -1]
        inv[idx] = inv_cum[go, -1]
        val[idx] = val_cum[go, -1]
        last_is_inv = is_inv[go, -1]
        rep[idx] = np.where(last_is_inv, 0, r_before[go, -1] + 1)
        in_a_row[idx] = np.where(last_is_inv, run[go, -1], 0)
        active = idx
        chunk = min(chunk * 2, 512)
    slashed = 1 - (1 - rules.dispute_slash_fraction) ** invalidations
    terms = np.stack([served, invalidations.astype(np.float64), slashed, invalid.astype(np.float64)], axis=1)
    return EpochStats(
        cheat_fraction=cheat_fraction,
        served=float(served.mean()),
        invalidations=float(invalidations.mean()),
        slashed_fraction=float(slashed.mean()),
        p_invalid=float(invalid.mean()),
        p_detected=float((invalidations > 0).mean()),
        trials=trials,
        profit_terms=terms,
    )


def exact_epoch(rules: Rules, cheat_fraction: float, answers: int, start_reputation: int = 0) -> EpochStats:
    """The same model by dynamic programming over the answer sequence, exact: the state (reputation,
    invalidations in a row, invalidated, validated) → probability, one answer at a time. The state space grows
    with the answers: for small epochs (tests, and a check on ``simulate_epoch``)."""
    pi = invalidation_probability(rules, cheat_fraction)
    keep = 1 - rules.dispute_slash_fraction
    states: dict[tuple[int, int, int, int], float] = {(start_reputation, 0, 0, 0): 1.0}
    served = invalidations = slashed = p_invalid = p_detected = 0.0
    for _ in range(answers):
        served += sum(states.values())
        nxt: dict[tuple[int, int, int, int], float] = defaultdict(float)
        for (rep, row, inv, val), w in states.items():
            p = float(validation_rate(rules, rep))
            nxt[(rep, row, inv, val)] += w * (1 - p)
            nxt[(rep + 1, 0, inv, val + 1)] += w * p * (1 - pi)
            hit = w * p * pi
            if is_invalid(rules, row + 1, inv + 1, val):
                invalidations += hit * (inv + 1)
                slashed += hit * (1 - keep ** (inv + 1))
                p_invalid += hit
                p_detected += hit
            else:
                nxt[(0, row + 1, inv + 1, val)] += hit
        states = nxt
    for (_rep, _row, inv, _val), w in states.items():
        invalidations += w * inv
        slashed += w * (1 - keep**inv)
        p_detected += w * (inv > 0)
    return EpochStats(cheat_fraction, served, invalidations, slashed, p_invalid, p_detected)


def selection_steps(rules: Rules, start_reputation: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """After each answer n = 1, 2, …: (n, k0, w) with w[i] = P(k0 + i selections among n answers) for a host never
    invalidated (its reputation rising by one at each selection). Probabilities below 1e-300 are dropped (they
    cannot change any figure printed)."""
    tiny = 1e-300
    lo, dist = 0, np.ones(1)
    for step in itertools.count(1):
        p = validation_rate(rules, start_reputation + lo + np.arange(dist.size))
        moved = dist * p
        dist = np.append(dist * (1 - p), 0.0)
        dist[1:] += moved
        nonzero = np.flatnonzero(dist >= tiny)
        lo, dist = lo + nonzero[0], dist[nonzero[0] : nonzero[-1] + 1]
        yield step, lo, dist


def selection_counts(rules: Rules, answers: list[int], start_reputation: int) -> dict[int, tuple[int, np.ndarray]]:
    """``selection_steps`` kept at each n in ``answers``."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    wanted, last = set(answers), max(answers)
    for step, lo, dist in selection_steps(rules, start_reputation):
        if step in wanted:
            out[step] = (lo, dist)
        if step >= last:
            return out
    raise AssertionError("unreachable")


def volume_for_detection(
    rules: Rules, cheat_fraction: float, start_reputation: int, target: float, limit: int = 1_000_000
) -> int | None:
    """The fewest answers in an epoch at which P(at least one invalidation) ≥ target (None: not within limit)."""
    for step, lo, dist in selection_steps(rules, start_reputation):
        if 1 - undetected_probability(rules, cheat_fraction, (lo, dist)) >= target:
            return step
        if step >= limit:
            return None
    raise AssertionError("unreachable")


def undetected_probability(rules: Rules, cheat_fraction: float, counts: tuple[int, np.ndarray]) -> float:
    """P(no invalidation in the epoch) = Σ_k P(k selections) · (1 − π)^k: exact (0.0 means below ~1e-300)."""
    lo, dist = counts
    pi = invalidation_probability(rules, cheat_fraction)
    if pi >= 1:
        return float(dist[0]) if lo == 0 else 0.0
    return float(np.dot(dist, np.exp((lo + np.arange(dist.size)) * math.log1p(-pi))))


# --- money ------------------------------------------------------------------------------------------------


def expected_profit(econ: Economy, stats: EpochStats) -> tuple[float, float]:
    """(E[profit], its standard error): P·(served − invalidated) − compute − K·slashed share + R·(not INVALID).
    Compute is C per answer less the cheap answers' saving, c · served of them in expectation (Wald)."""
    saving = (1 - econ.cheap_cost_ratio) * econ.compute_cost * stats.cheat_fraction
    per_answer = econ.fee - econ.compute_cost + saving
    if stats.profit_terms is None:
        value = (
            per_answer * stats.served
            - econ.fee * stats.invalidations
            - econ.collateral * stats.slashed_fraction
            + econ.epoch_reward * (1 - stats.p_invalid)
        )
        return value, 0.0
    served, inv, slashed, invalid = stats.profit_terms.T
    each = per_answer * served - econ.fee * inv - econ.collateral * slashed + econ.epoch_reward * (1 - invalid)
    return float(each.mean()), float(each.std(ddof=1) / math.sqrt(each.size))


def profit_difference(econ: Economy, cheat: EpochStats, honest: EpochStats) -> tuple[float, float]:
    """E[cheating profit] − E[honest profit] and the half-width of its 95% confidence interval."""
    mc, sc = expected_profit(econ, cheat)
    mh, sh = expected_profit(econ, honest)
    return mc - mh, 1.96 * math.hypot(sc, sh)


def break_even_collateral(econ: Economy, cheat: EpochStats, honest: EpochStats) -> float:
    """The collateral at which cheating's expected profit equals the honest one's (other terms as ``econ``):
    below it cheating pays. 0 when cheating loses even with no collateral."""
    diff_without = profit_difference(replace(econ, collateral=0.0), cheat, honest)[0]
    slashed = cheat.slashed_fraction - honest.slashed_fraction
    if diff_without <= 0:
        return 0.0
    return math.inf if slashed <= 0 else diff_without / slashed


# --- the tables -------------------------------------------------------------------------------------------


CHEAT_FRACTIONS = (0.01, 0.02, 0.05, 0.10, 0.20, 0.30, 0.50, 1.00)
SMALL_CHEAT_FRACTIONS = (0.001, 0.002, 0.005, 0.01)


def fmt_prob(x: float) -> str:
    """Probabilities near 1 as 1 − ε, so that 99.9% and 1 − 10⁻⁴⁰ read apart."""
    if x >= 0.9995:
        rest = 1 - x
        return "1 − <1e-15" if rest < 1e-15 else f"1 − {rest:.1e}"
    return f"{x:.4f}" if x >= 0.001 or x == 0 else f"{x:.1e}"


def fmt_complement(undetected: float) -> str:
    """P(detected) from an exact P(undetected)."""
    if undetected == 0.0:
        return "1 − <1e-300"
    if undetected < 0.0005:
        return f"1 − {undetected:.1e}"
    return f"{1 - undetected:.4f}"


def fmt_money(x: float, half: float) -> str:
    return f"{x:+,.0f} ± {half:,.0f}" if half >= 0.5 else f"{x:+,.1f}"


def fmt_signed(x: float, half: float) -> str:
    """A profit difference, bold where cheating would pay (≥ 0)."""
    return f"**{fmt_money(x, half)}**" if x >= 0 else fmt_money(x, half)


def fmt_rate(x: float, trials: int) -> str:
    """A Monte Carlo probability with its 95% interval (0 of N: below 3/N, the rule of three)."""
    if trials == 0:
        return fmt_prob(x)
    if x == 0:
        return f"0 (< {3 / trials:.0e})"
    if x == 1:
        return f"1 (> {1 - 3 / trials:.4f})"
    return f"{x:.3f} ± {1.96 * math.sqrt(x * (1 - x) / trials):.3f}"


@dataclass(frozen=True)
class Setting:
    """A row set: rules and start reputation changed from the defaults (fee, collateral and reward are
    accounting only and are varied without simulating again)."""

    label: str
    catch_rate: float
    false_mismatch_rate: float
    start_reputation: int


def scenario_rng(seed: int, setting_index: int, cheat_fraction: float) -> np.random.Generator:
    """One stream per (setting, c), so any table's figures depend on the seed only, not on what ran before."""
    return np.random.default_rng([seed, setting_index, round(cheat_fraction * 1_000_000)])


def run(args: argparse.Namespace) -> str:
    """The tables as markdown: the default rules' row per c, the robustness rows (q = 0.99, f = 0, a long honest
    record before cheating, P = 2 C and 5 C, R = 0), c below 1%, and detection at 30% by volume."""
    base_rules = Rules(catch_rate=args.catch_rate, false_mismatch_rate=args.false_mismatch)
    econ = Economy(
        fee=args.fee,
        answers_per_epoch=args.answers,
        collateral=args.collateral,
        epoch_reward=args.reward,
        start_reputation=args.start_reputation,
    )
    n = econ.answers_per_epoch
    q, f, r0 = base_rules.catch_rate, base_rules.false_mismatch_rate, econ.start_reputation
    variants = (
        [(q, f, r0)]
        if args.only_default
        else [(q, f, r0), (0.99, f, r0), (q, 0.0, r0), (q, f, 10_000), (0.99, f, 10_000)]
    )
    settings = [Setting(f"q = {vq:g}, f = {vf:g}, r₀ = {vr:,}", vq, vf, vr) for vq, vf, vr in variants]
    started = time.process_time()
    results: list[tuple[Setting, Rules, EpochStats, list[EpochStats], dict[int, tuple[int, np.ndarray]]]] = []
    counts_cache: dict[int, dict[int, tuple[int, np.ndarray]]] = {}
    for i, st in enumerate(settings):
        rules = replace(base_rules, catch_rate=st.catch_rate, false_mismatch_rate=st.false_mismatch_rate)
        honest = simulate_epoch(rules, 0.0, n, st.start_reputation, args.trials, scenario_rng(args.seed, i, 0.0))
        cheats = [
            simulate_epoch(rules, c, n, st.start_reputation, args.trials, scenario_rng(args.seed, i, c))
            for c in CHEAT_FRACTIONS
        ]
        if st.start_reputation not in counts_cache:
            volumes = sorted(set(args.volumes) | {n})
            counts_cache[st.start_reputation] = selection_counts(rules, volumes, st.start_reputation)
        results.append((st, rules, honest, cheats, counts_cache[st.start_reputation]))

    lines: list[str] = []
    add = lines.append
    add("Where the numbers come from:")
    lines.extend(SOURCES)
    add("")
    st, rules, honest, cheats, counts = results[0]
    h_profit, _ = expected_profit(econ, honest)
    add(f"### Default rules ({st.label}), P = {econ.fee} C")
    add("")
    add(
        f"Honest host: E[profit] = {h_profit:,.0f} C (fees {econ.fee - econ.compute_cost:.2f} C × {n:,} answers "
        f"+ R), P(INVALID) = {fmt_rate(honest.p_invalid, honest.trials)}, "
        f"P(an honest answer invalidated) per selection = {invalidation_probability(rules, 0.0):.1e}."
    )
    add("")
    add(
        "| c | cheat − honest, E[profit] (C, 95% CI) | same with R = 0 | P(detected ≥ 1 in the epoch) | "
        "P(INVALID in the epoch) | E[invalidations] | E[slashed] (C) | E[answers served] | "
        "break-even K at R = 0 (C) |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    no_reward = replace(econ, epoch_reward=0.0)
    for s in cheats:
        diff, half = profit_difference(econ, s, honest)
        diff0, half0 = profit_difference(no_reward, s, honest)
        k_star = break_even_collateral(no_reward, s, honest)
        add(
            f"| {s.cheat_fraction:.0%} | {fmt_signed(diff, half)} | {fmt_signed(diff0, half0)} | "
            f"{fmt_complement(undetected_probability(rules, s.cheat_fraction, counts[n]))} | "
            f"{fmt_rate(s.p_invalid, s.trials)} | {s.invalidations:.2f} | "
            f"{econ.collateral * s.slashed_fraction:,.0f} | {s.served:,.0f} | {k_star:,.0f} |"
        )
    add("")
    add("### Robustness: cheat − honest, E[profit] in C (the last column: the widest 95% CI half-width of the row)")
    add("")
    add("| rules | P | R | " + " | ".join(f"c = {c:.0%}" for c in CHEAT_FRACTIONS) + " | worst CI ± |")
    add("|---|---:|---:|" + "---:|" * len(CHEAT_FRACTIONS) + "---:|")
    for st, _rules, honest, cheats, _counts in results:
        for fee in (econ.fee, 2.0, 5.0):
            for reward in ("R", 0.0):
                e = replace(econ, fee=fee, epoch_reward=(fee - econ.compute_cost) * n if reward == "R" else 0.0)
                diffs = [profit_difference(e, s, honest) for s in cheats]
                cells = [f"**{d:+,.0f}**" if d >= 0 else f"{d:+,.0f}" for d, _ in diffs]
                add(
                    f"| {st.label} | {fee:g} C | {e.epoch_reward:,.0f} | "
                    + " | ".join(cells)
                    + f" | {max(h for _, h in diffs):,.0f} |"
                )
    add("")
    add(
        "R in this table is (P − C) · n (the default's rule for R); K = "
        f"{econ.collateral:,.0f} C throughout. A bold figure is ≥ 0: cheating would pay there."
    )
    add("")
    add("### Below the issue's range: where the collateral alone must deter (c < 1%)")
    add("")
    add(
        "Under ~1.3% invalidations per validation the SPRT's boundary rises faster than a cheater's invalidations, "
        "so INVALID becomes rare and the slashes are what is left; the break-even K is the collateral below which "
        "cheating would pay with no epoch reward at stake."
    )
    add("")
    add(
        "| rules | c | cheat − honest (C), R as above | with R = 0 | P(INVALID) | E[invalidations] | "
        "break-even K at R = 0 (C) |"
    )
    add("|---|---:|---:|---:|---:|---:|---:|")
    for i, (st, rules, honest, _cheats, _counts) in enumerate(results):
        if i not in (0, len(results) - 1):
            continue  # the default rules and the last (weakest) row set
        for c in SMALL_CHEAT_FRACTIONS:
            s = simulate_epoch(rules, c, n, st.start_reputation, args.trials, scenario_rng(args.seed, i, c))
            diff, half = profit_difference(econ, s, honest)
            diff0, half0 = profit_difference(no_reward, s, honest)
            add(
                f"| {st.label} | {c:.1%} | {fmt_signed(diff, half)} | {fmt_signed(diff0, half0)} | "
                f"{fmt_rate(s.p_invalid, s.trials)} | {s.invalidations:.2f} | "
                f"{break_even_collateral(no_reward, s, honest):,.0f} |"
            )
    add("")
    add("### Detection of a host cheating on 30% of its answers within one epoch (exact)")
    add("")
    volumes = sorted(set(args.volumes) | {n})
    add("| rules | " + " | ".join(f"n = {v:,}" for v in volumes) + " | fewest answers for ≥ 99.9% |")
    add("|---|" + "---:|" * (len(volumes) + 1))
    for st, rules, _honest, _cheats, counts in results:
        if st.false_mismatch_rate != base_rules.false_mismatch_rate:
            continue  # f changes π(0.3) by ~1e-9: the same row
        cells = [fmt_complement(undetected_probability(rules, 0.30, counts[v])) for v in volumes]
        fewest = volume_for_detection(rules, 0.30, st.start_reputation, 0.999)
        add(f"| {st.label} | " + " | ".join(cells) + f" | {fewest:,} |")
    add("")
    add(
        "P(at least one invalidation among n answers) = 1 − Σ_k P(k selections) (1 − π)^k, π = P(a selected answer "
        "is invalidated) = 0.3 · q · P(≥ 2 of 3 voters catch it) + 0.7 · f · P(≥ 2 of 3 err)."
    )
    cpu = time.process_time() - started
    header = (
        f"PoC V2 economy of one epoch: n = {n:,} answers per host, P = {econ.fee} C, K = {econ.collateral:,.0f} C, "
        f"R = {econ.epoch_reward:,.0f} C, cheap answer = {econ.cheap_cost_ratio} C; {args.trials:,} trials per row, "
        f"seed {args.seed}; {cpu:.1f} s CPU."
    )
    lines[:0] = [header, ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=Economy.answers_per_epoch, help="answers per host per epoch")
    parser.add_argument("--fee", type=float, default=Economy.fee, help="P, payment per answer, in C")
    parser.add_argument("--collateral", type=float, default=Economy.collateral, help="K, in C")
    parser.add_argument("--reward", type=float, default=Economy.epoch_reward, help="R, the host's epoch reward, in C")
    parser.add_argument("--catch-rate", type=float, default=Rules.catch_rate, help="q")
    parser.add_argument("--false-mismatch", type=float, default=Rules.false_mismatch_rate, help="f_honest")
    parser.add_argument("--start-reputation", type=int, default=Economy.start_reputation, help="r at the start")
    parser.add_argument("--trials", type=int, default=2000, help="Monte Carlo trials per (rules, c)")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument(
        "--volumes",
        type=lambda s: [int(v) for v in s.split(",")],
        default=[100, 1000, 10_000],
        help="answers per epoch for the detection table (comma-separated)",
    )
    parser.add_argument("--only-default", action="store_true", help="only the default rules' row set")
    print(run(parser.parse_args()))


if __name__ == "__main__":
    main()
