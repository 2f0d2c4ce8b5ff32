"""The race's decision for one host, as a pure function of its commitment's tallies and the validator set's
powers (integers only: every node decides the same).

The **validating power** of a host is the power of the validators that validated it (each with its power when it
sent the validation: the tallies on the commitment). A decision needs a **quorum**: validating power above half of
the set's power less the host's own (a host never judges itself). With a quorum, the host is **fraud** when those
that found fraud hold more than 1/3 of the validating power, **confirmed** when those that judged it valid hold
more than 2/3 of it (it then weighs its proof count times ``weight_scale``), else unconfirmed.

Why a half: if the validators that cannot detect a fraud (faulty ones) hold under 1/3 of the set's power, a
cheater is never confirmed. Confirming needs valid power above 2/3 of a validating power above half of the
others' (at least 2/3 of the set: x/stake caps a host at 1/3 from four hosts on), so above 1/3 of the set: some
honest validator would have had to judge the fraud valid. And up to a third of the set may be silent (a stopped
ML node, a validator cut off) without stopping the others' confirmation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.crypto import bech32


def judge(
    commitment: sprint_pb2.Commitment, powers: Mapping[bytes, int], total: int, weight_scale: int
) -> sprint_pb2.HostResult:
    """``total``: the sum of ``powers`` (computed once for every host)."""
    others = total - powers.get(bech32.decode(commitment.host), 0)
    valid, fraud = commitment.valid_power, commitment.fraud_power
    validating = valid + fraud
    if 2 * validating <= others:
        outcome = sprint_pb2.OUTCOME_UNCONFIRMED
    elif 3 * fraud > validating:
        outcome = sprint_pb2.OUTCOME_FRAUD
    elif 3 * valid > 2 * validating:
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
        others_power=others,
        slashed="0",
    )


def fraud_finders(validations: Sequence[sprint_pb2.Validation]) -> list[tuple[bytes, int]]:
    """(validator, power when it validated) of those that found fraud: a fraud slash is paid to them pro rata."""
    return [(bech32.decode(v.validator), v.power) for v in validations if v.fraud and v.power]
