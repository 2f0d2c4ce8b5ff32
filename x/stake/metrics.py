"""x/stake's figures for the node's metrics: the hosts, each one's collateral, epoch weight and power."""

from __future__ import annotations

from sdk.context import Context
from sdk.crypto import bech32
from sdk.telemetry.figures import Figure
from x.stake.keeper import StakeKeeper


def figures(keeper: StakeKeeper, ctx: Context) -> list[Figure]:
    """Per host (label ``host``, its operator address) and in total; weights are the latest recorded epoch's."""
    hosts = keeper.hosts(ctx)
    epoch = keeper.weights_epoch(ctx)
    weights = {} if epoch is None else keeper.epoch_weights(ctx, epoch)
    powers = keeper.validator_powers(ctx)
    out = [
        Figure("hosts", "Registered hosts.", len(hosts)),
        Figure("hosts_jailed", "Registered hosts that are jailed.", sum(1 for h in hosts if h.jailed)),
        Figure("validators", "Hosts in the validator set in force.", len(powers)),
        Figure("total_power", "The validator set's total power.", sum(powers.values())),
        Figure("weights_epoch", "The epoch the recorded weights are for (-1: none).", -1 if epoch is None else epoch),
    ]
    for host in hosts:
        operator = bech32.decode(host.operator)
        label = (("host", host.operator),)
        out += [
            Figure("host_collateral", "A host's bonded collateral (bond denom).", int(host.collateral), label),
            Figure("host_weight", "A host's weight in the recorded epoch.", weights.get(operator, 0), label),
            Figure("host_power", "A host's power in the validator set in force.", powers.get(operator, 0), label),
        ]
    return out
