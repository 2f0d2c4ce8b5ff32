"""The race's decision for one host, as a pure function of its commitment, the validations of it and the
validator set's powers (integers only: every node decides the same).

Validating power: the set's total power less the host's own (a host never judges itself). A host is
**confirmed** when the validators that judged it valid hold more than 2/3 of it, and then weighs its proof
count times ``weight_scale``; it committed **fraud** when those that found fraud hold more than 1/3 of it.
A validation counts with its validator's power at the decision (a validator jailed since counts for nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.crypto import bech32


def judge(
    commitment: sprint_pb2.Commitment,
    validations: Sequence[sprint_pb2.Validation],
    powers: Mapping[bytes, int],
    weight_scale: int,
) -> sprint_pb2.HostResult:
    host = bech32.decode(commitment.host)
    validating = sum(powers.values()) - powers.get(host, 0)
    valid = sum(powers.get(bech32.decode(v.validator), 0) for v in validations if not v.fraud)
    fraud = sum(powers.get(bech32.decode(v.validator), 0) for v in validations if v.fraud)
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


def fraud_finders(validations: Sequence[sprint_pb2.Validation], powers: Mapping[bytes, int]) -> list[tuple[bytes, int]]:
    """(validator, power) of those that found fraud and hold power: a fraud slash is paid to them pro rata."""
    finders = [(bech32.decode(v.validator), powers.get(bech32.decode(v.validator), 0)) for v in validations if v.fraud]
    return [(validator, power) for validator, power in finders if power]
