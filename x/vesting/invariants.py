"""What must hold of vesting's state after every block (registered as ``vesting/…``)."""

from __future__ import annotations

from protogen.gonka.vesting.v1 import vesting_pb2
from sdk.context import Context, PrefixStore
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
    try:
        rates = _stored_rates(store)
        changes = _stored_changes(store, last)
        pending = {
            address: _locked_by_schedule(address, rates.get(address, {}), changes.get(address, []), last)
            for address in sorted(rates.keys() | changes.keys())
        }
        _check_totals(pending, {bech32.decode(a.address): a for a in vesting.accounts(ctx)})
    except _Broken as broken:
        return str(broken)
    return None


class _Broken(Exception):
    """What ``scheduled_accounted`` found broken."""


def _stored_rates(store: PrefixStore) -> dict[bytes, Amounts]:
    """Every account's release rate, each checked to be stored under its own key and not empty."""
    rates: dict[bytes, Amounts] = {}
    for key, raw in store.iterate(keys.RATE_PREFIX):
        rate = vesting_pb2.ReleaseRate.FromString(raw)
        address = bech32.decode(rate.address)
        if key != keys.rate_key(address):
            raise _Broken(f"release rate of {rate.address} is stored under another key")
        if not amounts(rate.amount):
            raise _Broken(f"release rate of {rate.address} is empty")
        rates[address] = amounts(rate.amount)
    return rates


def _stored_changes(store: PrefixStore, last: int) -> dict[bytes, list[tuple[int, Amounts]]]:
    """Every account's rate changes (epoch, change), each checked to be stored under its own key, indexed by its
    account, due after the next release epoch and not empty, with no other account index entry."""
    changes: dict[bytes, list[tuple[int, Amounts]]] = {}
    count = 0
    for key, raw in store.iterate(keys.CHANGE_PREFIX):
        change = vesting_pb2.RateChange.FromString(raw)
        address = bech32.decode(change.address)
        what = f"rate change of {change.address} at epoch {change.epoch}"
        if key != keys.change_key(change.epoch, address):
            raise _Broken(f"{what} is stored under another key")
        if store.get(keys.account_change_key(address, change.epoch)) is None:
            raise _Broken(f"{what} is not indexed by account")
        if change.epoch <= last + 1:
            raise _Broken(f"{what} is not after the next release epoch {last + 1}")
        if set(amounts(change.increase)) & set(amounts(change.decrease)):
            raise _Broken(f"{what} both raises and lowers one denom")
        if not change_amounts(change):
            raise _Broken(f"{what} is empty")
        changes.setdefault(address, []).append((change.epoch, change_amounts(change)))
        count += 1
    indexed = sum(1 for _ in store.iterate(keys.ACCOUNT_CHANGE_PREFIX))
    if indexed != count:
        raise _Broken(f"{indexed} account index entries for {count} rate changes")
    return changes


def _locked_by_schedule(address: bytes, rate: Amounts, changes: list[tuple[int, Amounts]], last: int) -> Amounts:
    """What the releases after epoch ``last`` will pay out, from the rate and its changes; checked never to go
    below zero and to end."""
    current, epoch, locked = rate, last + 1, {}
    for at, change in sorted(changes):
        locked = add(locked, {d: a * (at - epoch) for d, a in current.items()})
        current, epoch = add(current, change), at
        if any(a < 0 for a in current.values()):
            raise _Broken(f"{bech32.encode(address)}: release at epoch {at} below zero ({_text(current)})")
    if current:
        raise _Broken(f"{bech32.encode(address)}: release rate {_text(current)} never ends")
    return locked


def _check_totals(pending: dict[bytes, Amounts], accounts: dict[bytes, vesting_pb2.VestingAccount]) -> None:
    """For each account, vested + locked (``pending``) = scheduled, and no pending parts without totals."""
    for address in sorted(pending.keys() | accounts.keys()):
        account = accounts.get(address)
        if account is None:
            raise _Broken(f"{bech32.encode(address)} has pending parts but no totals")
        scheduled, vested = amounts(account.scheduled), amounts(account.vested)
        locked = pending.get(address, {})
        if add(vested, locked) != scheduled:
            raise _Broken(
                f"{account.address}: vested {_text(vested)} + locked {_text(locked)} != scheduled {_text(scheduled)}"
            )


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
