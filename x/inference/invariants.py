"""What must hold of x/inference's state after every block (registered as ``inference/…``)."""

from __future__ import annotations

from sdk.context import Context
from x.inference import keys
from x.inference.keeper import STARTED, InferenceKeeper


def started_escrow(keeper: InferenceKeeper, ctx: Context) -> dict[str, int]:
    """The escrow of the STARTED inferences, by denom."""
    total: dict[str, int] = {}
    for inference in keeper.inferences(ctx):
        if inference.status == STARTED:
            total[inference.denom] = total.get(inference.denom, 0) + inference.escrow
    return total


def escrow_held(keeper: InferenceKeeper, ctx: Context) -> str | None:
    """``inference/escrow-held``: the module account holds exactly the STARTED escrows."""
    expected = started_escrow(keeper, ctx)
    held = dict(keeper.bank.get_all_balances(ctx, keeper.address))
    for denom in sorted(expected.keys() | held.keys()):
        if held.get(denom, 0) != expected.get(denom, 0):
            return (
                f"inference account holds {held.get(denom, 0)}{denom} but started inferences escrow "
                f"{expected.get(denom, 0)}{denom}"
            )
    return None


def index_consistent(keeper: InferenceKeeper, ctx: Context) -> str | None:
    """``inference/index-consistent``: the expiry index is exactly the STARTED inferences, each at its
    expiry height."""
    expected = {keys.expiry_key(i.expiry_height, i.id) for i in keeper.inferences(ctx) if i.status == STARTED}
    found = set(keeper.queued(ctx, keys.EXPIRY_PREFIX))
    for key in sorted(expected - found):
        return f"started inference {key[9:].hex()} is not in the expiry index at its height"
    for key in sorted(found - expected):
        return (
            f"expiry index holds {key[9:].hex()} at height {int.from_bytes(key[1:9], 'big')}, which is not "
            "a started inference expiring then"
        )
    return None
