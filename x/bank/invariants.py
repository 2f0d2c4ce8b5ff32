"""What must hold of bank's state after every block (registered as ``bank/…``)."""

from __future__ import annotations

from sdk.context import Context
from x.bank import keys


def _amounts(ctx: Context, prefix: bytes) -> list[tuple[bytes, str]]:
    return [(key, raw.decode()) for key, raw in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]


def nonnegative_balances(ctx: Context) -> str | None:
    """Every stored balance is a positive whole number (zero balances are deleted, never stored)."""
    for key, text in _amounts(ctx, keys.BALANCES_PREFIX):
        if not text.isascii() or not text.isdigit() or int(text) <= 0:
            return f"balance {key.hex()} is {text!r}"
    return None


def total_supply(ctx: Context) -> str | None:
    """Each denom's supply equals the sum of every account's balance of it: sends move coins, only mint
    and burn change the supply."""
    held: dict[str, int] = {}
    for key, text in _amounts(ctx, keys.BALANCES_PREFIX):
        address_length = key[len(keys.BALANCES_PREFIX)]
        denom = key[len(keys.BALANCES_PREFIX) + 1 + address_length :].decode()
        held[denom] = held.get(denom, 0) + int(text)
    supply = {key[len(keys.SUPPLY_PREFIX) :].decode(): int(text) for key, text in _amounts(ctx, keys.SUPPLY_PREFIX)}
    for denom in sorted(held.keys() | supply.keys()):
        if held.get(denom, 0) != supply.get(denom, 0):
            return f"supply of {denom} is {supply.get(denom, 0)} but balances sum to {held.get(denom, 0)}"
    return None


def supply_accounted(ctx: Context) -> str | None:
    """Each denom's supply is its supply at genesis plus what was minted since, less what was burned: no coin
    comes or goes but by mint and burn. (An exported chain's genesis supply is the export's.)"""
    records = {
        prefix: {key[1:].decode(): int(text) for key, text in _amounts(ctx, prefix)}
        for prefix in (keys.SUPPLY_PREFIX, keys.GENESIS_SUPPLY_PREFIX, keys.MINTED_PREFIX, keys.BURNED_PREFIX)
    }
    supply, genesis, minted, burned = (
        records[p] for p in (keys.SUPPLY_PREFIX, keys.GENESIS_SUPPLY_PREFIX, keys.MINTED_PREFIX, keys.BURNED_PREFIX)
    )
    for denom in sorted(set().union(*records.values())):
        expected = genesis.get(denom, 0) + minted.get(denom, 0) - burned.get(denom, 0)
        if supply.get(denom, 0) != expected:
            return (
                f"supply of {denom} is {supply.get(denom, 0)}, but genesis {genesis.get(denom, 0)} + minted "
                f"{minted.get(denom, 0)} - burned {burned.get(denom, 0)} = {expected}"
            )
    return None
