"""x/bls's figures for the node's metrics: the last height a BLS certificate covers and how many are kept."""

from __future__ import annotations

from sdk.context import Context
from sdk.telemetry.figures import Figure
from x.bls import keys
from x.bls.keeper import BlsKeeper


def figures(keeper: BlsKeeper, ctx: Context) -> list[Figure]:
    store = ctx.kv(keys.STORE_PREFIX)
    kept = sum(1 for prefix in (keys.CERTIFICATE_PREFIX, keys.KEPT_CERTIFICATE_PREFIX) for _ in store.iterate(prefix))
    last = keeper.latest_certified_height(ctx)
    return [
        Figure("last_certified_height", "The last height with a BLS certificate (0: none yet).", last or 0),
        Figure("certificates", "BLS certificates kept in state.", kept),
        Figure("keys", "Registered host BLS keys.", len(keeper.all_keys(ctx))),
    ]
