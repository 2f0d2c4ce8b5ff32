"""The tally: votes weighed by the validator set's voting power at tally time, by the SDK's rules.

quorum over the total power of every validator; veto over the power of the votes cast; threshold over the
power of the non-abstaining votes. Exact fractions throughout (weights are LegacyDec text), so every node
computes the same; the counts reported are the whole part of each option's power.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from cosmpy.protos.cosmos.gov.v1 import gov_pb2

from sdk.crypto import bech32
from sdk.dec import parse_share

YES, ABSTAIN, NO, VETO = (
    gov_pb2.VOTE_OPTION_YES,
    gov_pb2.VOTE_OPTION_ABSTAIN,
    gov_pb2.VOTE_OPTION_NO,
    gov_pb2.VOTE_OPTION_NO_WITH_VETO,
)


@dataclass(frozen=True)
class Outcome:
    passes: bool
    burn: bool
    """Whether the deposits are burned (missed quorum with burn_vote_quorum, veto with burn_vote_veto)."""
    result: gov_pb2.TallyResult
    reason: str
    """Why, in words: for events and logs."""


def count(votes: Iterable[gov_pb2.Vote], powers: Mapping[bytes, int]) -> tuple[dict[int, Fraction], Fraction]:
    """Each option's power and the total power of the votes cast; a voter without power now counts 0."""
    totals = {YES: Fraction(0), ABSTAIN: Fraction(0), NO: Fraction(0), VETO: Fraction(0)}
    cast = Fraction(0)
    for vote in votes:
        power = powers.get(bech32.decode(vote.voter), 0)
        if not power:
            continue
        for option in vote.options:
            totals[option.option] += power * parse_share(option.weight, "vote weight")
        cast += power
    return totals, cast


def tally_result(totals: Mapping[int, Fraction]) -> gov_pb2.TallyResult:
    return gov_pb2.TallyResult(
        yes_count=str(int(totals[YES])),
        abstain_count=str(int(totals[ABSTAIN])),
        no_count=str(int(totals[NO])),
        no_with_veto_count=str(int(totals[VETO])),
    )


def decide(
    totals: Mapping[int, Fraction],
    cast: Fraction,
    total_power: int,
    quorum: Fraction,
    threshold: Fraction,
    veto: Fraction,
    burn_vote_quorum: bool,
    burn_vote_veto: bool,
) -> Outcome:
    """The SDK's ``Tally`` (x/gov keeper/tally.go, v0.50), in its order."""
    result = tally_result(totals)
    if total_power == 0:
        return Outcome(False, False, result, "no voting power in the validator set")
    if cast / total_power < quorum:
        return Outcome(False, burn_vote_quorum, result, "quorum not reached")
    if cast - totals[ABSTAIN] == 0:
        return Outcome(False, False, result, "every vote abstains")
    if totals[VETO] / cast > veto:
        return Outcome(False, burn_vote_veto, result, "vetoed")
    if totals[YES] / (cast - totals[ABSTAIN]) > threshold:
        return Outcome(True, False, result, "passed")
    return Outcome(False, False, result, "threshold not reached")
