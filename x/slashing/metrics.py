"""x/slashing's figures for the node's metrics: validators jailed for downtime or tombstoned for double signing,
and the blocks each has missed in its window. (The node counts the slashes decided in a block's own hooks, for
downtime, double signing or a race cheater, as ``gonkad_block_events_total{type="slash"}``.)"""

from __future__ import annotations

from sdk.context import Context
from sdk.crypto import bech32
from sdk.telemetry.figures import Figure
from x.slashing.keeper import SlashingKeeper


def figures(keeper: SlashingKeeper, ctx: Context) -> list[Figure]:
    infos = keeper.signing_infos(ctx)
    out = [
        Figure("tombstoned", "Validators tombstoned for double signing.", sum(1 for _, i in infos if i.tombstoned)),
    ]
    out += [
        Figure(
            "missed_blocks",
            "Blocks a validator missed in its signing window.",
            info.missed_blocks_counter,
            (("validator", bech32.encode(address, bech32.VALCONS_PREFIX)),),
        )
        for address, info in infos
    ]
    return out
