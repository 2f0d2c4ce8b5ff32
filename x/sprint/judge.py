"""The race's decision for one host, as a pure function of its commitment's tallies and the validator set's
powers (integers only: every node decides the same).

Validating power: the set's total power less the host's own (a host never judges itself). A host is
**confirmed** when the validators that judged it valid hold more than 2/3 of it, and then weighs its proof
count times ``weight_scale``; it committed **fraud** when those that found fraud hold more than 1/3 of it.
Each validation counts with its validator's power when it was sent (the tally on the commitment); the power
table changes only at set validators, or when a host is jailed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.crypto import bech32


def judge(
    commitment: sprint_pb2.Commitment, powers: Mapping[bytes, int], total: int, weight_scale: int
) -> sprint_pb2.HostResult:
    """``total``: the sum of ``powers`` (computed once for every host)."""
    validating = total - powers.get(bech32.decode(commitment.host), 0)
    valid, fraud = commitment.valid_power, commitment.fraud_power
    if validating and 3 * fraud > validating:
        outcome = sprint_pb2.OUTCOME_FRAUD
    elif validating and 3 * valid > 2 * validating:
        outcome = sprint_pb2.OUTCOME_CONFIRMED
    else:
        outcome = sprint_pb2.OUTCOME_UNCONFIRMED
    return sprint_pb2.HostResult(
        host=commitment.host,
        count=commitment.count,
        weight=commitment.count * weight_scale if outcome == sprint_pb2.OUTCOME_CONFIRMED else 0,
        outcome=outcome,
        valid_power=valid,
        fraud_power=fraud,
        validating_power=validating,
        slashed="0",
    )


def fraud_finders(validations: Sequence[sprint_pb2.Validation]) -> list[tuple[bytes, int]]:
    """(validator, power when it validated) of those that found fraud: a fraud slash is paid to them pro rata."""
    return [(bech32.decode(v.validator), v.power) for v in validations if v.fraud and v.power]
