"""Vesting: coins an account holds but may not send yet, released one part per epoch (epoch schedules) or
by block time (genesis vesting accounts), with the Cosmos SDK's delegated-vesting tracking so that locked
coins can be deposited as collateral.

Amounts are ints in ``{denom: amount}`` dicts inside the keeper (no zero entries), ``Coins`` at its edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2

from protogen.gonka.vesting.v1 import vesting_pb2
from sdk.address import module_address
from sdk.coins import Coins, make_coins, parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidCoins, ErrInvalidRequest
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT
from x.vesting import keys
from x.vesting.expected_keepers import BankKeeper, EpochsKeeper
from x.vesting.params import MAX_VESTING_EPOCHS, default_params

NS = 10**9
Amounts = dict[str, int]


def amounts(coins: Iterable[coin_pb2.Coin]) -> Amounts:
    """Proto coins as a dict (amounts validated; zero entries left out)."""
    out: Amounts = {}
    for coin in coins:
        amount = parse_amount(coin.amount)
        if amount:
            out[coin.denom] = out.get(coin.denom, 0) + amount
    return out


def to_proto(values: Mapping[str, int]) -> list[coin_pb2.Coin]:
    return [coin_pb2.Coin(denom=d, amount=str(values[d])) for d in sorted(values) if values[d]]


def to_coins(values: Mapping[str, int]) -> Coins:
    return make_coins([(d, a) for d, a in values.items() if a > 0])


def add(a: Mapping[str, int], b: Mapping[str, int], sign: int = 1) -> Amounts:
    out = dict(a)
    for denom, amount in b.items():
        out[denom] = out.get(denom, 0) + sign * amount
    return {d: v for d, v in out.items() if v}


def split(amount: int, epochs: int) -> list[int]:
    """``amount`` in ``epochs`` parts: ``amount // epochs`` each, the remainder added to the first part."""
    part, remainder = divmod(amount, epochs)
    return [part + remainder] + [part] * (epochs - 1)


def change_amounts(change: vesting_pb2.RateChange) -> Amounts:
    """A rate change as one signed amount per denom: increase - decrease."""
    return add(amounts(change.increase), amounts(change.decrease), -1)


def expand(
    address: str, last: int, rate: Amounts, changes: Iterable[tuple[int, Amounts]]
) -> list[vesting_pb2.VestingPart]:
    """The parts a rate (what epoch ``last`` + 1 releases) and its later changes imply: one per epoch from
    ``last`` + 1 up to the last change, where not zero (a rate left after the last change is not listed:
    the invariant refuses it)."""
    parts = []
    current, epoch = dict(rate), last + 1
    for at, change in changes:
        if at > epoch:
            if current:
                parts.extend(
                    vesting_pb2.VestingPart(address=address, release_epoch=e, amount=to_proto(current))
                    for e in range(epoch, at)
                )
            epoch = at
        current = add(current, change)
    return parts


Segment = tuple[int, int, int]
"""(first epoch, epoch after the last, what each of those epochs releases) of one denom."""


def schedule_segments(denom: str, last: int, rate: Amounts, changes: Iterable[tuple[int, Amounts]]) -> list[Segment]:
    """One denom's pending releases as constant runs, from epoch ``last`` + 1 to its last change."""
    segments, value, start = [], rate.get(denom, 0), last + 1
    for epoch, change in changes:
        if denom not in change:
            continue
        if value and epoch > start:
            segments.append((start, epoch, value))
        value, start = value + change[denom], epoch
    return segments


def cut_tail(segments: list[Segment], amount: int) -> list[Segment]:
    """The runs with ``amount`` taken from the latest releases first (a run partly taken splits in two)."""
    kept = list(segments)
    while amount and kept:
        start, end, value = kept.pop()
        whole, part = divmod(amount, value)
        if whole >= end - start:
            amount -= value * (end - start)
            continue
        end -= whole
        if part:
            kept.extend(
                [(start, end - 1, value), (end - 1, end, value - part)]
                if end - 1 > start
                else [(start, end, value - part)]
            )
        else:
            kept.append((start, end, value))
        amount = 0
    return [s for s in kept if s[2] and s[1] > s[0]]


def value_at(segments: list[Segment], epoch: int) -> int:
    return next((value for start, end, value in segments if start <= epoch < end), 0)


def timed_locked(timed: vesting_pb2.TimedVesting, time_ns: int) -> Amounts:
    """What a genesis vesting account still has locked at block time ``time_ns`` (compared in whole unix
    seconds, as the SDK compares ``blockTime.Unix()``): delayed, all of it before ``end_time``; continuous,
    all until ``start_time``, none from ``end_time``, between them original − ⌊original·elapsed/span⌋."""
    now = time_ns // NS
    original = amounts(timed.original_vesting)
    if now >= timed.end_time:
        return {}
    if timed.delayed or now <= timed.start_time:
        return original
    elapsed, span = now - timed.start_time, timed.end_time - timed.start_time
    return {d: a - a * elapsed // span for d, a in original.items() if a - a * elapsed // span}


class VestingKeeper:
    """Owns the ``vesting/`` prefix. Implements the epoch hooks (releases at epoch start) and bank's
    locked-coins and delegation hooks (app.py wires all three)."""

    def __init__(self, bank: BankKeeper, epochs: EpochsKeeper, authority: bytes = GOV_AUTHORITY) -> None:
        self.bank = bank
        self.epochs = epochs
        self.authority = authority

    # --- params -------------------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> vesting_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return vesting_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: vesting_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def vesting_epochs(self, ctx: Context) -> int:
        """Over how many epochs rewards and work payouts vest (``reward_vesting_epochs``)."""
        return self.get_params(ctx).reward_vesting_epochs

    # --- block time ---------------------------------------------------------------------------------

    def last_block_time_ns(self, ctx: Context) -> int:
        """The block time locks by time are computed at: this block's in a block (stored at begin block),
        the last committed block's in queries and CheckTx (whose header has no time)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.LAST_BLOCK_TIME_KEY)
        return int.from_bytes(raw, "big", signed=True) if raw else 0

    def set_last_block_time(self, ctx: Context, time_ns: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.LAST_BLOCK_TIME_KEY, time_ns.to_bytes(8, "big", signed=True))

    # --- records ------------------------------------------------------------------------------------

    def get_account(self, ctx: Context, address: bytes) -> vesting_pb2.VestingAccount | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.account_key(address))
        return vesting_pb2.VestingAccount.FromString(raw) if raw else None

    def _account(self, ctx: Context, address: bytes) -> vesting_pb2.VestingAccount:
        return self.get_account(ctx, address) or vesting_pb2.VestingAccount(address=bech32.encode(address))

    def set_account(self, ctx: Context, account: vesting_pb2.VestingAccount) -> None:
        """Store an account's totals (deleted once it has none)."""
        key = keys.account_key(bech32.decode(account.address))
        store = ctx.kv(keys.STORE_PREFIX)
        if account.scheduled or account.vested or account.delegated_free or account.delegated_vesting:
            store.set(key, account.SerializeToString())
        else:
            store.delete(key)

    def accounts(self, ctx: Context) -> list[vesting_pb2.VestingAccount]:
        return [
            vesting_pb2.VestingAccount.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.ACCOUNT_PREFIX)
        ]

    def get_timed(self, ctx: Context, address: bytes) -> vesting_pb2.TimedVesting | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.timed_key(address))
        return vesting_pb2.TimedVesting.FromString(raw) if raw else None

    def set_timed(self, ctx: Context, timed: vesting_pb2.TimedVesting) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.timed_key(bech32.decode(timed.address)), timed.SerializeToString())

    def timed_accounts(self, ctx: Context) -> list[vesting_pb2.TimedVesting]:
        return [vesting_pb2.TimedVesting.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.TIMED_PREFIX)]

    # --- epoch schedules: release rates and their changes ----------------------------------------------
    #
    # An account's pending releases f(e) (what the start of epoch e releases, e > L, the last release epoch)
    # are stored as a difference array: its rate f(L + 1) under RATE_PREFIX (only while not zero: the
    # accounts a release visits) and, for every later epoch where f changes, f(e) - f(e - 1) under
    # CHANGE_PREFIX (indexed by account). The form is canonical: the same pending parts and L give the same
    # keys, whatever schedules made them. A vest writes O(1) keys; an epoch start touches only the accounts
    # that release something or whose rate changes.

    def last_release_epoch(self, ctx: Context) -> int:
        """L: the last epoch whose start released (the rates are what L + 1 releases)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.LAST_RELEASE_EPOCH_KEY)
        return int.from_bytes(raw, "big") if raw else 0

    def set_last_release_epoch(self, ctx: Context, epoch: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.LAST_RELEASE_EPOCH_KEY, epoch.to_bytes(8, "big"))

    def get_rate(self, ctx: Context, address: bytes) -> Amounts:
        """What the start of epoch L + 1 releases for ``address``."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.rate_key(address))
        return amounts(vesting_pb2.ReleaseRate.FromString(raw).amount) if raw else {}

    def _set_rate(self, ctx: Context, address: bytes, rate: Amounts) -> None:
        if any(a < 0 for a in rate.values()):
            raise ValueError(f"vesting rate of {bech32.encode(address)} would fall below zero: {rate}")
        store = ctx.kv(keys.STORE_PREFIX)
        if rate:
            store.set(
                keys.rate_key(address),
                vesting_pb2.ReleaseRate(address=bech32.encode(address), amount=to_proto(rate)).SerializeToString(),
            )
        else:
            store.delete(keys.rate_key(address))

    def get_change(self, ctx: Context, epoch: int, address: bytes) -> Amounts:
        """The signed change of ``address``'s rate at the start of ``epoch``."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.change_key(epoch, address))
        return change_amounts(vesting_pb2.RateChange.FromString(raw)) if raw else {}

    def _set_change(self, ctx: Context, epoch: int, address: bytes, change: Amounts) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        if change:
            store.set(
                keys.change_key(epoch, address),
                vesting_pb2.RateChange(
                    address=bech32.encode(address),
                    epoch=epoch,
                    increase=to_proto({d: a for d, a in change.items() if a > 0}),
                    decrease=to_proto({d: -a for d, a in change.items() if a < 0}),
                ).SerializeToString(),
            )
            store.set(keys.account_change_key(address, epoch), PRESENT)
        else:
            store.delete(keys.change_key(epoch, address))
            store.delete(keys.account_change_key(address, epoch))

    def _change_rate(self, ctx: Context, address: bytes, epoch: int, change: Amounts, last: int) -> None:
        """Add ``change`` to what every epoch from ``epoch`` on releases (``last``: L)."""
        if epoch <= last + 1:
            self._set_rate(ctx, address, add(self.get_rate(ctx, address), change))
        else:
            self._set_change(ctx, epoch, address, add(self.get_change(ctx, epoch, address), change))

    def changes(self, ctx: Context, address: bytes) -> list[tuple[int, Amounts]]:
        """The account's pending rate changes in epoch order."""
        store = ctx.kv(keys.STORE_PREFIX)
        prefix = keys.account_changes_prefix(address)
        found = []
        for key, _ in store.iterate(prefix):
            epoch = int.from_bytes(key[len(prefix) :], "big")
            found.append((epoch, self.get_change(ctx, epoch, address)))
        return found

    def parts(self, ctx: Context, address: bytes) -> list[vesting_pb2.VestingPart]:
        """The account's pending parts in release order, derived from its rate and rate changes (what each
        epoch start from L + 1 on releases, where not zero). O(pending parts) to build."""
        return expand(
            bech32.encode(address),
            self.last_release_epoch(ctx),
            self.get_rate(ctx, address),
            self.changes(ctx, address),
        )

    def schedule_addresses(self, ctx: Context) -> list[bytes]:
        """Every address with a release rate or a pending rate change, in byte order."""
        store = ctx.kv(keys.STORE_PREFIX)
        found = {k[len(keys.RATE_PREFIX) :] for k, _ in store.iterate(keys.RATE_PREFIX)}
        found |= {k[len(keys.ACCOUNT_CHANGE_PREFIX) : -8] for k, _ in store.iterate(keys.ACCOUNT_CHANGE_PREFIX)}
        return sorted(found)

    def all_parts(self, ctx: Context) -> list[vesting_pb2.VestingPart]:
        """Every pending part, by release epoch then address (genesis export)."""
        found = [part for address in self.schedule_addresses(ctx) for part in self.parts(ctx, address)]
        return sorted(found, key=lambda p: (p.release_epoch, bech32.decode(p.address)))

    def import_parts(self, ctx: Context, parts: Iterable[vesting_pb2.VestingPart], last: int) -> None:
        """Store pending parts (genesis) as rates and rate changes, with ``last`` as L: parts for one address
        and epoch add up; every part must release after ``last``."""
        self.set_last_release_epoch(ctx, last)
        by_address: dict[bytes, dict[int, Amounts]] = {}
        for part in parts:
            if part.release_epoch <= last:
                raise ValueError(
                    f"vesting genesis: part of {part.address} at epoch {part.release_epoch} is not after "
                    f"the last release epoch {last}"
                )
            epochs = by_address.setdefault(bech32.decode(part.address), {})
            epochs[part.release_epoch] = add(epochs.get(part.release_epoch, {}), amounts(part.amount))
        for address, epochs in by_address.items():
            self._set_rate(ctx, address, epochs.get(last + 1, {}))
            for epoch in sorted({e for e in epochs} | {e + 1 for e in epochs}):
                if epoch >= last + 2:
                    self._set_change(ctx, epoch, address, add(epochs.get(epoch, {}), epochs.get(epoch - 1, {}), -1))

    # --- vesting ------------------------------------------------------------------------------------

    def vest(self, ctx: Context, from_module: str, to: bytes, coins: Coins, epochs: int) -> None:
        """Pay ``coins`` from module account ``from_module`` to ``to``, locked on a schedule that releases one
        part at the start of each of the next ``epochs`` epochs (the first at current epoch + 1). Each part
        is ``amount // epochs`` of each denom, the remainder in the first part. Stored as at most three
        changes of the account's release rate (O(1) writes, whatever ``epochs``)."""
        if not 1 <= epochs <= MAX_VESTING_EPOCHS:
            raise ErrInvalidRequest.wrap(f"vesting epochs must be in [1, {MAX_VESTING_EPOCHS}], got {epochs}")
        if not coins:
            raise ErrInvalidCoins.wrap("nothing to vest")
        self.bank.send_coins(ctx, module_address(from_module), to, coins)
        account = self._account(ctx, to)
        # A lock that only fell since the last delegation leaves delegated_vesting above what is vesting; as
        # vesting grows again the excess must count as free, or the new coins would start out unlocked.
        vesting = self.vesting_coins(ctx, to)
        dv, df = amounts(account.delegated_vesting), amounts(account.delegated_free)
        excess = {d: a - vesting.get(d, 0) for d, a in dv.items() if a > vesting.get(d, 0)}
        if excess:
            account.ClearField("delegated_vesting")
            account.delegated_vesting.extend(to_proto(add(dv, excess, -1)))
            account.ClearField("delegated_free")
            account.delegated_free.extend(to_proto(add(df, excess)))
        first = self.epochs.current_epoch(ctx).number + 1
        changes: dict[int, Amounts] = {}
        for denom, amount in coins:
            part, remainder = divmod(amount, epochs)
            # +(part + remainder) from the first epoch, -remainder from the second, -part after the last
            for epoch, change in ((first, part + remainder), (first + 1, -remainder), (first + epochs, -part)):
                if change:
                    changes[epoch] = add(changes.get(epoch, {}), {denom: change})
        last = self.last_release_epoch(ctx)
        for epoch in sorted(changes):
            if changes[epoch]:
                self._change_rate(ctx, to, epoch, changes[epoch], last)
        scheduled = add(amounts(account.scheduled), dict(coins))
        account.ClearField("scheduled")
        account.scheduled.extend(to_proto(scheduled))
        self.set_account(ctx, account)
        ctx.emit(
            "vest",
            recipient=bech32.encode(to),
            sender=bech32.encode(module_address(from_module)),
            amount=str(coins),
            epochs=str(epochs),
            first_release_epoch=str(first),
        )

    def clawback(self, ctx: Context, owner: bytes, to_module: str, denom: str, amount: int) -> int:
        """Take back up to ``amount`` of ``denom`` still locked on ``owner``'s epoch schedule, its latest parts
        first, into module account ``to_module`` (a payment whose answer lost its dispute, x/poc through
        x/inference). Capped by what the schedule still locks and by what of the locked coins the owner still
        holds (locked coins deposited as collateral stay deposited). Returns the amount taken; never raises for
        a shortfall."""
        locked = self.schedule_locked(ctx, owner).get(denom, 0)
        held = min(dict(self.locked_coins(ctx, owner)).get(denom, 0), self.bank.get_balance(ctx, owner, denom))
        take = max(0, min(amount, locked, held))
        if take == 0:
            return 0
        last = self.last_release_epoch(ctx)
        rate, changes = self.get_rate(ctx, owner), self.changes(ctx, owner)
        segments = cut_tail(schedule_segments(denom, last, rate, changes), take)
        rate[denom] = value_at(segments, last + 1)
        self._set_rate(ctx, owner, {d: a for d, a in rate.items() if a})
        bounds = {edge for start, end, _ in segments for edge in (start, end) if edge > last + 1}
        for epoch in sorted({e for e, _ in changes} | bounds):  # the old changes and the runs' new edges
            change = self.get_change(ctx, epoch, owner)
            change[denom] = value_at(segments, epoch) - value_at(segments, epoch - 1)
            self._set_change(ctx, epoch, owner, {d: a for d, a in change.items() if a})
        account = self._account(ctx, owner)
        scheduled = add(amounts(account.scheduled), {denom: take}, -1)
        account.ClearField("scheduled")
        account.scheduled.extend(to_proto(scheduled))
        self.set_account(ctx, account)
        self.bank.send_coins(ctx, owner, module_address(to_module), make_coins([(denom, take)]))
        ctx.emit("vesting_clawback", address=bech32.encode(owner), amount=f"{take}{denom}", to=to_module)
        return take

    def release(self, ctx: Context, epoch: int) -> None:
        """Release every epoch from L + 1 to ``epoch`` (one missed by a failed hook goes at the next epoch's
        start): each account with a rate gets it per epoch, added to its ``vested``, one event per account;
        after each epoch the rate changes due at the next apply. Visits only the accounts with a rate and
        the changes due."""
        last = self.last_release_epoch(ctx)
        if epoch <= last:
            return
        store = ctx.kv(keys.STORE_PREFIX)
        released: dict[bytes, Amounts] = {}
        n = len(keys.RATE_PREFIX)
        k = last + 1
        while k <= epoch:
            upto = epoch
            for key, _ in store.iterate(keys.CHANGE_PREFIX, start=keys.changes_end(k)):  # the next change after k
                upto = min(epoch, int.from_bytes(key[len(keys.CHANGE_PREFIX) : len(keys.CHANGE_PREFIX) + 8], "big") - 1)
                break
            count = upto - k + 1
            for key, raw in store.iterate(keys.RATE_PREFIX):
                rate = amounts(vesting_pb2.ReleaseRate.FromString(raw).amount)
                address = key[n:]
                released[address] = add(released.get(address, {}), {d: a * count for d, a in rate.items()})
            due: dict[bytes, Amounts] = {}
            for key, raw in list(store.iterate(keys.CHANGE_PREFIX, end=keys.changes_end(upto + 1))):
                change = vesting_pb2.RateChange.FromString(raw)
                address = key[len(keys.CHANGE_PREFIX) + 8 :]
                due[address] = add(due.get(address, {}), change_amounts(change))
                store.delete(key)
                store.delete(keys.account_change_key(address, change.epoch))
            for address, change in due.items():
                self._set_rate(ctx, address, add(self.get_rate(ctx, address), change))
            k = upto + 1
        self.set_last_release_epoch(ctx, epoch)
        for address in sorted(released):
            amount = released[address]
            if not amount:
                continue
            account = self._account(ctx, address)
            vested = add(amounts(account.vested), amount)
            account.ClearField("vested")
            account.vested.extend(to_proto(vested))
            self.set_account(ctx, account)
            ctx.emit("vesting_release", address=bech32.encode(address), amount=str(to_coins(amount)), epoch=str(epoch))

    # --- epoch hooks --------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        return None

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        self.release(ctx, epoch)

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        return None

    # --- locked coins -------------------------------------------------------------------------------

    def schedule_locked(self, ctx: Context, address: bytes) -> Amounts:
        """Still locked by epoch schedules: scheduled − vested (the sum of the pending parts)."""
        account = self.get_account(ctx, address)
        if account is None:
            return {}
        return add(amounts(account.scheduled), amounts(account.vested), -1)

    def time_locked(self, ctx: Context, address: bytes) -> Amounts:
        timed = self.get_timed(ctx, address)
        return {} if timed is None else timed_locked(timed, self.last_block_time_ns(ctx))

    def vesting_coins(self, ctx: Context, address: bytes) -> Amounts:
        """Everything still vesting (V): by schedule and by time, delegated or not."""
        return add(self.schedule_locked(ctx, address), self.time_locked(ctx, address))

    def locked_coins(self, ctx: Context, address: bytes) -> Coins:
        """Bank's locked-coins hook: what may not be sent, max(0, V − delegated_vesting) per denom (the SDK's
        ``LockedCoins``): locked coins deposited as collateral are not counted twice."""
        vesting = self.vesting_coins(ctx, address)
        if not vesting:
            return Coins()
        account = self.get_account(ctx, address)
        dv = amounts(account.delegated_vesting) if account is not None else {}
        return to_coins({d: a - dv.get(d, 0) for d, a in vesting.items() if a > dv.get(d, 0)})

    def track_delegation(self, ctx: Context, address: bytes, coins: Coins) -> None:
        """A deposit of ``coins`` (bank checked the balance): the still-locked part not yet deposited,
        X = min(max(V − DV, 0), D), adds to delegated_vesting, the rest Y = D − X to delegated_free."""
        vesting = self.vesting_coins(ctx, address)
        account = self._account(ctx, address)
        dv, df = amounts(account.delegated_vesting), amounts(account.delegated_free)
        for denom, amount in coins:
            x = min(max(vesting.get(denom, 0) - dv.get(denom, 0), 0), amount)
            dv[denom] = dv.get(denom, 0) + x
            df[denom] = df.get(denom, 0) + amount - x
        self._set_delegated(ctx, account, dv, df)

    def track_undelegation(self, ctx: Context, address: bytes, coins: Coins) -> None:
        """A return of ``coins``: free first, X = min(DF, D) off delegated_free, then Y = min(DV, D − X) off
        delegated_vesting, so coins still vesting come back locked. (As in the SDK, a slash does not lower the
        tracked amounts; the return of what is left frees delegated_free first.)"""
        account = self.get_account(ctx, address)
        if account is None:
            return
        dv, df = amounts(account.delegated_vesting), amounts(account.delegated_free)
        for denom, amount in coins:
            x = min(df.get(denom, 0), amount)
            y = min(dv.get(denom, 0), amount - x)
            df[denom] = df.get(denom, 0) - x
            dv[denom] = dv.get(denom, 0) - y
        self._set_delegated(ctx, account, dv, df)

    def _set_delegated(self, ctx: Context, account: vesting_pb2.VestingAccount, dv: Amounts, df: Amounts) -> None:
        account.ClearField("delegated_vesting")
        account.delegated_vesting.extend(to_proto(dv))
        account.ClearField("delegated_free")
        account.delegated_free.extend(to_proto(df))
        self.set_account(ctx, account)

    def vesting_addresses(self, ctx: Context) -> list[bytes]:
        """Every address with a schedule, delegation tracking or a lock by time, in byte order."""
        n = len(keys.ACCOUNT_PREFIX)
        found = {k[n:] for k, _ in ctx.kv(keys.STORE_PREFIX).iterate(keys.ACCOUNT_PREFIX)}
        found |= {k[n:] for k, _ in ctx.kv(keys.STORE_PREFIX).iterate(keys.TIMED_PREFIX)}
        return sorted(found)
