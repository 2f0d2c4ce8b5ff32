"""What must hold of vesting's state after every block (registered as ``vesting/…``)."""

from __future__ import annotations

from protogen.gonka.vesting.v1 import vesting_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.vesting import keys
from x.vesting.keeper import Amounts, VestingKeeper, add, amounts, change_amounts


def scheduled_accounted(vesting: VestingKeeper, ctx: Context) -> str | None:
    """For each account, vested + locked = scheduled, locked being the sum of the future releases its rate
    and rate changes imply (what its schedules released plus what they will is every coin ever put on
    them); those releases never go below zero and end (the rate returns to zero); every rate and change is
    stored under its own key, every change is due after the next release epoch and indexed by its account,
    and there is no other index entry."""
    store = ctx.kv(keys.STORE_PREFIX)
    last = vesting.last_release_epoch(ctx)
    rates: dict[bytes, Amounts] = {}
    for key, raw in store.iterate(keys.RATE_PREFIX):
        rate = vesting_pb2.ReleaseRate.FromString(raw)
        address = bech32.decode(rate.address)
        if key != keys.rate_key(address):
            return f"release rate of {rate.address} is stored under another key"
        if not amounts(rate.amount):
            return f"release rate of {rate.address} is empty"
        rates[address] = amounts(rate.amount)
    changes: dict[bytes, list[tuple[int, Amounts]]] = {}
    count = 0
    for key, raw in store.iterate(keys.CHANGE_PREFIX):
        change = vesting_pb2.RateChange.FromString(raw)
        address = bech32.decode(change.address)
        what = f"rate change of {change.address} at epoch {change.epoch}"
        if key != keys.change_key(change.epoch, address):
            return f"{what} is stored under another key"
        if store.get(keys.account_change_key(address, change.epoch)) is None:
            return f"{what} is not indexed by account"
        if change.epoch <= last + 1:
            return f"{what} is not after the next release epoch {last + 1}"
        if set(amounts(change.increase)) & set(amounts(change.decrease)):
            return f"{what} both raises and lowers one denom"
        if not change_amounts(change):
            return f"{what} is empty"
        changes.setdefault(address, []).append((change.epoch, change_amounts(change)))
        count += 1
    indexed = sum(1 for _ in store.iterate(keys.ACCOUNT_CHANGE_PREFIX))
    if indexed != count:
        return f"{indexed} account index entries for {count} rate changes"
    pending: dict[bytes, Amounts] = {}
    for address in sorted(rates.keys() | changes.keys()):
        current, epoch, locked = rates.get(address, {}), last + 1, {}
        for at, change in sorted(changes.get(address, [])):
            locked = add(locked, {d: a * (at - epoch) for d, a in current.items()})
            current, epoch = add(current, change), at
            if any(a < 0 for a in current.values()):
                return f"{bech32.encode(address)}: release at epoch {at} below zero ({_text(current)})"
        if current:
            return f"{bech32.encode(address)}: release rate {_text(current)} never ends"
        pending[address] = locked
    accounts = {bech32.decode(a.address): a for a in vesting.accounts(ctx)}
    for address in sorted(pending.keys() | accounts.keys()):
        account = accounts.get(address)
        if account is None:
            return f"{bech32.encode(address)} has pending parts but no totals"
        scheduled, vested = amounts(account.scheduled), amounts(account.vested)
        locked = pending.get(address, {})
        if add(vested, locked) != scheduled:
            return f"{account.address}: vested {_text(vested)} + locked {_text(locked)} != scheduled {_text(scheduled)}"
    return None


def locked_held(vesting: VestingKeeper, ctx: Context) -> str | None:
    """Every vesting account's balance covers its locked coins: nothing locked was sent away."""
    for address in vesting.vesting_addresses(ctx):
        for denom, amount in vesting.locked_coins(ctx, address):
            balance = vesting.bank.get_balance(ctx, address, denom)
            if balance < amount:
                return f"{bech32.encode(address)} holds {balance}{denom} but has {amount}{denom} locked"
    return None


def _text(values: Amounts) -> str:
    return ",".join(f"{values[d]}{d}" for d in sorted(values)) or "0"
