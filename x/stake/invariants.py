"""What must hold of stake's state after every block (registered as ``stake/…``)."""

from __future__ import annotations

from sdk.context import Context
from sdk.crypto import bech32
from x.stake import keys
from x.stake.keeper import StakeKeeper


def collateral_held(stake: StakeKeeper, ctx: Context) -> str | None:
    """Bonded collateral adds up to what ``bonded_tokens_pool`` holds, and unbonding entries to what
    ``not_bonded_tokens_pool`` holds: collateral moves only with its record."""
    bonded = sum(int(h.collateral) for h in stake.hosts(ctx))
    unbonding = sum(int(e.amount) for e in stake.unbonding_entries(ctx))
    for what, recorded, pool in (("bonded", bonded, keys.BONDED_POOL), ("unbonding", unbonding, keys.UNBONDING_POOL)):
        held = stake.pool_balance(ctx, pool)
        if recorded != held:
            return f"{what} collateral is {recorded} but {pool} holds {held}"
    return None


def power_table_sent(stake: StakeKeeper, ctx: Context) -> str | None:
    """After end block, CometBFT has been sent exactly the power table: every change reached it."""
    current, sent = stake.consensus_powers(ctx), stake.last_sent_powers(ctx)
    if current != sent:
        differ = sorted(k.hex()[:16] for k in current.keys() | sent.keys() if current.get(k) != sent.get(k))
        return f"power table and the set sent to CometBFT differ for keys {differ}"
    return None


def jailed_out_of_set(stake: StakeKeeper, ctx: Context) -> str | None:
    """No jailed host has power."""
    powers = stake.validator_powers(ctx)
    for host in stake.hosts(ctx):
        if host.jailed and bech32.decode(host.operator) in powers:
            return f"jailed host {host.operator} is in the validator set"
    return None
