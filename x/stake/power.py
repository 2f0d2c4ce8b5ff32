"""From the epoch's weights to the validator set: the rules of x/stake's README (Voting power), as pure
functions over integers and exact fractions, so every node computes the same powers.

1. ``backed_weight``: a host's weight counts in full up to what its collateral backs; a share of it
   (``free_weight_share``) needs no collateral.
2. ``select_validators``: the ``max_validators`` hosts of most weight (ties: lower operator address).
3. ``cap_powers``: no host above ``max_power_share`` of the total, found exactly by water-filling.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from sdk.dec import mul_floor


def backed_weight(weight: int, collateral: int, free_share: Fraction, collateral_per_weight: int) -> int:
    """The free share of ``weight``, plus as much of the rest as ``collateral`` backs."""
    free = mul_floor(weight, free_share)
    return free + min(weight - free, collateral // collateral_per_weight)


def select_validators(weights: Mapping[bytes, int], max_validators: int) -> dict[bytes, int]:
    """The ``max_validators`` positive weights that are largest (equal weights: lower address first)."""
    ranked = sorted(((w, op) for op, w in weights.items() if w > 0), key=lambda item: (-item[0], item[1]))
    return {op: w for w, op in ranked[:max_validators]}


def effective_share(share: Fraction, hosts: int) -> Fraction:
    """The cap for a set of ``hosts``: ``share``, unless so few hosts cannot all keep under it (n · share
    ≤ 1, where a cap of 1/n forces every host down to the smallest); then 2 / (n + 2): 1/2 for two hosts,
    2/5 for three, 1/3 for four."""
    return share if hosts * share > 1 else Fraction(2, hosts + 2)


def power_cap(powers: Mapping[bytes, int], share: Fraction) -> int | None:
    """The largest power ``c`` such that, with every power above it lowered to ``c``, no host holds more
    than ``share`` of the total; None if no power needs lowering.

    With powers sorted ascending p_1 … p_n and the k smallest kept, the n − k others at ``c`` must satisfy
    c = share · (p_1 + … + p_k + (n − k) c), so c = share · S_k / (1 − share · (n − k)); the first k (from
    0) whose next power exceeds its share of S_k + (n − k) p_{k+1} fixes c. Rounded down."""
    values = sorted(powers.values())
    n = len(values)
    kept_sum = 0
    for k, power in enumerate(values):
        if power * share.denominator > share.numerator * (kept_sum + power * (n - k)):
            # positive here: k = 0 cannot reach this line (it would need share · n < 1, which
            # effective_share rules out), and for k > 0 the condition itself implies it
            return kept_sum * share.numerator // (share.denominator - share.numerator * (n - k))
        kept_sum += power
    return None


def cap_powers(powers: Mapping[bytes, int], share: Fraction) -> dict[bytes, int]:
    """``powers`` with each lowered to the cap (``power_cap`` at the ``effective_share``); a set of one
    keeps its power."""
    if len(powers) <= 1:
        return dict(powers)
    cap = power_cap(powers, effective_share(share, len(powers)))
    return {op: p if cap is None else min(p, cap) for op, p in powers.items()}


def validator_powers(
    weights: Mapping[bytes, int],
    collateral: Mapping[bytes, int],
    free_share: Fraction,
    collateral_per_weight: int,
    max_validators: int,
    max_share: Fraction,
) -> dict[bytes, int]:
    """The validator set (operator -> power, only positive powers) of an epoch's ``weights``: backed by
    ``collateral``, the largest selected, then capped. Hosts left out of ``weights`` (jailed) get none."""
    backed = {
        op: backed_weight(w, collateral.get(op, 0), free_share, collateral_per_weight) for op, w in weights.items()
    }
    capped = cap_powers(select_validators(backed, max_validators), max_share)
    return {op: p for op, p in sorted(capped.items()) if p > 0}
