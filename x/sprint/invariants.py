"""What must hold of x/sprint's state after every block (registered as ``sprint/…``)."""

from __future__ import annotations

from protogen.gonka.sprint.v1 import sprint_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.sprint.keeper import SprintKeeper


def validations_committed(sprint: SprintKeeper, ctx: Context) -> str | None:
    """Every validation judges a kept commitment, by another host, within its samples; each commitment's tallies
    are the powers of its validations."""
    tallies: dict[tuple[int, str], list[int]] = {}
    for v in sprint.validations(ctx):
        if v.validator == v.host:
            return f"{v.validator} validated itself in epoch {v.epoch}"
        if v.failures > v.samples:
            return f"{v.validator} on {v.host} in epoch {v.epoch}: {v.failures} failures of {v.samples} samples"
        if sprint.commitment(ctx, v.epoch, bech32.decode(v.host)) is None:
            return f"{v.validator} validated {v.host} in epoch {v.epoch}, which has no commitment"
        tallies.setdefault((v.epoch, v.host), [0, 0])[v.fraud] += v.power
    for c in sprint.commitments(ctx):
        valid, fraud = tallies.get((c.epoch, c.host), [0, 0])
        if (c.valid_power, c.fraud_power) != (valid, fraud):
            return f"{c.host} in epoch {c.epoch}: tallies {c.valid_power}/{c.fraud_power}, validations {valid}/{fraud}"
    return None


def results_add_up(sprint: SprintKeeper, ctx: Context) -> str | None:
    """A result's total weight is its hosts' weights, unless it carried the previous weights over; only a
    confirmed host weighs."""
    for result in sprint.results(ctx):
        weights = [h.weight for h in result.hosts]
        if not result.carried_over and sum(weights) != result.total_weight:
            return f"epoch {result.epoch}: host weights add to {sum(weights)}, total {result.total_weight}"
        if any(h.weight and h.outcome != sprint_pb2.OUTCOME_CONFIRMED for h in result.hosts):
            return f"epoch {result.epoch}: a host that was not confirmed has weight"
    return None
