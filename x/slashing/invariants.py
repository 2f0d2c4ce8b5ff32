"""What must hold of slashing's state after every block (registered as ``slashing/…``)."""

from __future__ import annotations

from sdk.address import module_address
from sdk.context import Context
from x.slashing import keys
from x.slashing.keeper import SlashingKeeper


def slashed_coins_settled(slashing: SlashingKeeper, ctx: Context) -> str | None:
    """Every slash pays out or burns all it takes within the slash: its module account stays empty."""
    pool = module_address(keys.SLASHED_POOL)  # read only: an invariant must not create the account
    denom = slashing.stake.get_params(ctx).bond_denom
    held = slashing.bank.get_balance(ctx, pool, denom)
    return None if held == 0 else f"{keys.SLASHED_POOL} module account holds {held}{denom}"
