"""Rewards: each epoch's issuance and fees, split between the community pool and the hosts.

At the end of epoch e ≥ 1 (``on_epoch_end``, an x/epochs hook, run at the first block of e + 1 before its
transactions): mint min(R(e), cap − minted) into the ``rewards`` account (issuance.py); move in everything
the fee collector holds (the fees of e's blocks); of each denom's total, ⌊total · community_pool_share⌋
goes to the community pool; the rest is split by the work reported for e (``report_work``), or, when none
was, by x/stake's recorded weights for e: host i gets ⌊rest · w_i / W⌋, vested (x/vesting) over
``vesting_epochs``; the rounding dust, the share of a host x/poc holds INVALID at the epoch's end, and
everything when there are no hosts, goes to the pool too.
Nothing stays in the ``rewards`` account. Epoch 0 (the genesis epoch) pays nothing: no issuance, and its
fees wait in the fee collector for epoch 1's end.
"""

from __future__ import annotations

from protogen.gonka.rewards.v1 import rewards_pb2
from sdk.address import module_address
from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.dec import mul_floor
from sdk.errors import ErrInvalidRequest
from sdk.params import GOV_AUTHORITY
from x.rewards import keys
from x.rewards.expected_keepers import (
    AccountKeeper,
    BankKeeper,
    EpochsKeeper,
    PoolKeeper,
    StakeKeeper,
    Standing,
    VestingKeeper,
)
from x.rewards.issuance import epoch_issuance
from x.rewards.params import amount, decay, default_params, pool_share

FEE_COLLECTOR = "fee_collector"
"""The Cosmos SDK's fee collector account (x/auth's ``FEE_COLLECTOR``; the app may name another)."""


class RewardsKeeper:
    """Owns the ``rewards/`` prefix and the module account ``rewards``."""

    def __init__(
        self,
        accounts: AccountKeeper,
        bank: BankKeeper,
        epochs: EpochsKeeper,
        stake: StakeKeeper,
        pool: PoolKeeper,
        vesting: VestingKeeper,
        authority: bytes = GOV_AUTHORITY,
        fee_collector: str = FEE_COLLECTOR,
    ) -> None:
        """``vesting``: where hosts' shares are locked, released one part per epoch."""
        self.accounts = accounts
        self.bank = bank
        self.epochs = epochs
        self.stake = stake
        self.pool = pool
        self.vesting = vesting
        self.authority = authority
        self.fee_collector = fee_collector
        self.standing: Standing | None = None

    def set_standing(self, standing: Standing) -> None:
        """x/poc, built after this keeper (app.py): whose share of an epoch goes to the pool instead."""
        self.standing = standing

    # --- params and totals --------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> rewards_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return rewards_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: rewards_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def update_params(self, ctx: Context, params: rewards_pb2.Params) -> None:
        """MsgUpdateParams' apply: a cap below what was already minted is refused (``sdk/18``)."""
        minted = self.minted(ctx)
        if amount(params, "issuance_cap") < minted:
            raise ErrInvalidRequest.wrap(
                f"invalid params: issuance_cap {params.issuance_cap} is below the {minted} already minted"
            )
        self.set_params(ctx, params)

    def minted(self, ctx: Context) -> int:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.MINTED_KEY)
        return int(raw) if raw else 0

    def set_minted(self, ctx: Context, minted: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.MINTED_KEY, str(minted).encode())

    def issuance(self, ctx: Context, epoch: int) -> tuple[int, int]:
        """(what the end of ``epoch`` mints, R(epoch) before the cap); (0, 0) for epoch 0."""
        if epoch < 1:
            return 0, 0
        params = self.get_params(ctx)
        uncapped = epoch_issuance(amount(params, "initial_epoch_reward"), decay(params), epoch)
        room = max(0, amount(params, "issuance_cap") - self.minted(ctx))
        return min(uncapped, room), uncapped

    # --- work ---------------------------------------------------------------------------------------

    def report_work(self, ctx: Context, epoch: int, host: bytes, units: int) -> None:
        """Add ``units`` of work by ``host`` in ``epoch`` (the current one or later: an ended epoch is paid)."""
        if units < 0:
            raise ValueError(f"work units must not be negative, got {units}")
        current = self.epochs.current_epoch(ctx).number
        if epoch < current:
            raise ValueError(f"epoch {epoch} has ended (current {current}); its rewards are paid")
        if units == 0:
            return
        store = ctx.kv(keys.STORE_PREFIX)
        key = keys.work_key(epoch, host)
        raw = store.get(key)
        store.set(key, str((int(raw) if raw else 0) + units).encode())

    def epoch_work(self, ctx: Context, epoch: int) -> dict[bytes, int]:
        n = len(keys.work_prefix(epoch))
        return {k[n:]: int(v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.work_prefix(epoch))}

    def all_work(self, ctx: Context) -> list[rewards_pb2.WorkEntry]:
        return [
            rewards_pb2.WorkEntry(epoch=int.from_bytes(k[1:9], "big"), host=bech32.encode(k[9:]), units=v.decode())
            for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.WORK_PREFIX)
        ]

    def set_work(self, ctx: Context, epoch: int, host: bytes, units: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.work_key(epoch, host), str(units).encode())

    # --- per host -----------------------------------------------------------------------------------

    def host_rewarded(self, ctx: Context, host: bytes) -> Coins:
        prefix = keys.host_total_prefix(host)
        return make_coins([(k[len(prefix) :].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)])

    def host_totals(self, ctx: Context) -> dict[bytes, Coins]:
        found: dict[bytes, list[tuple[str, int]]] = {}
        for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.HOST_TOTAL_PREFIX):
            found.setdefault(k[1:21], []).append((k[21:].decode(), int(v)))
        return {host: make_coins(pairs) for host, pairs in found.items()}

    def add_host_rewarded(self, ctx: Context, host: bytes, coins: Coins) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        for denom, value in coins:
            key = keys.host_total_key(host, denom)
            raw = store.get(key)
            store.set(key, str((int(raw) if raw else 0) + value).encode())

    def host_pending(self, ctx: Context, host: bytes) -> Coins:
        """What of the host's rewards is still locked in vesting."""
        return make_coins([(d, a) for d, a in self.vesting.schedule_locked(ctx, host).items() if a > 0])

    # --- the epoch's distribution ---------------------------------------------------------------------

    def recipients(self, ctx: Context, epoch: int) -> dict[bytes, int]:
        """Who shares the epoch's rewards and by what weight: reported work, else x/stake's weights for it."""
        work = self.epoch_work(ctx, epoch)
        if sum(work.values()) > 0:
            return work
        if self.stake.weights_epoch(ctx) == epoch:
            return {host: w for host, w in self.stake.epoch_weights(ctx, epoch).items() if w > 0}
        return {}

    def distribute(self, ctx: Context, epoch: int) -> None:
        """Epoch ``epoch``'s issuance and fees, paid as the module docstring says; its work records dropped."""
        params = self.get_params(ctx)
        denom = params.mint_denom
        recipients = self.recipients(ctx, epoch)
        withheld = {h for h in recipients if self.standing is not None and self.standing.is_invalid(ctx, h)}
        self._drop_work(ctx, epoch)
        if epoch < 1:
            return
        minted, _ = self.issuance(ctx, epoch)
        rewards = self.accounts.ensure_module_account(ctx, keys.REWARDS_ACCOUNT)
        if minted:
            self.bank.mint_coins(ctx, keys.REWARDS_ACCOUNT, Coins(((denom, minted),)))
            self.set_minted(ctx, self.minted(ctx) + minted)
        fees = self.bank.get_all_balances(ctx, module_address(self.fee_collector))
        if fees:
            self.bank.send_coins(ctx, module_address(self.fee_collector), rewards, fees)
        totals = dict(fees)
        if minted:
            totals[denom] = totals.get(denom, 0) + minted
        share = pool_share(params)
        weight = sum(recipients.values())
        to_pool: dict[str, int] = {}
        to_host: dict[bytes, list[tuple[str, int]]] = {}
        for coin_denom in sorted(totals):
            total = totals[coin_denom]
            rest = total - mul_floor(total, share)
            paid = 0
            for host, w in recipients.items():
                part = rest * w // weight
                if part and host not in withheld:
                    to_host.setdefault(host, []).append((coin_denom, part))
                    paid += part
            to_pool[coin_denom] = total - paid
        pool_coins = make_coins([(d, a) for d, a in to_pool.items() if a])
        if pool_coins:
            self.pool.fund_from_module(ctx, keys.REWARDS_ACCOUNT, pool_coins, keys.POOL_SOURCE)
        epochs = self.vesting.vesting_epochs(ctx)
        for host in sorted(to_host):
            coins = make_coins(to_host[host])
            self.vesting.vest(ctx, keys.REWARDS_ACCOUNT, host, coins, epochs)
            self.add_host_rewarded(ctx, host, coins)
        ctx.emit(
            "rewards",
            epoch=str(epoch),
            minted=f"{minted}{denom}",
            fees=str(make_coins(list(fees))),
            pool=str(pool_coins),
            hosts=str(len(to_host)),
            withheld=",".join(sorted(bech32.encode(h) for h in withheld)),
        )

    def _drop_work(self, ctx: Context, epoch: int) -> None:
        """Work of ``epoch`` and any earlier one: paid now, or never (an epoch whose hook failed, epoch 0)."""
        store = ctx.kv(keys.STORE_PREFIX)
        end = keys.work_prefix(epoch + 1)
        for key, _ in list(store.iterate(keys.WORK_PREFIX, end=end)):
            store.delete(key)

    # --- epoch hooks --------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        self.distribute(ctx, epoch)

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        return None

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        return None

    # --- invariants ---------------------------------------------------------------------------------

    def minted_within_cap(self, ctx: Context) -> str | None:
        """Invariant ``rewards/minted-within-cap``: never more minted than the cap (a cap below what was
        minted is refused, in MsgUpdateParams and in genesis)."""
        cap = amount(self.get_params(ctx), "issuance_cap")
        minted = self.minted(ctx)
        return None if minted <= cap else f"minted {minted} exceeds the issuance cap {cap}"
