"""The community pool: coins held in common in the module account ``pool``, with an account of where they
came from (by source) and what was spent, so that its balance is always inflows − spends.

Other modules pay in with ``fund_from_module`` (from their module account: slash remainders, reward shares,
burned deposits) or ``fund`` (from an account: MsgFundCommunityPool); only the authority spends
(MsgCommunityPoolSpend).
"""

from __future__ import annotations

import re

from protogen.gonka.pool.v1 import pool_pb2
from sdk.address import module_address
from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from x.pool import keys
from x.pool.errors import ErrBadSource
from x.pool.expected_keepers import AccountKeeper, BankKeeper
from x.pool.params import default_params

SOURCE_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}\Z")  # \Z: $ would take a final newline too


class PoolKeeper:
    """Owns the ``pool/`` prefix and the module account ``pool``."""

    def __init__(self, accounts: AccountKeeper, bank: BankKeeper, authority: bytes = GOV_AUTHORITY) -> None:
        self.accounts = accounts
        self.bank = bank
        self.authority = authority

    # --- params -------------------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> pool_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return pool_pb2.Params.FromString(raw) if raw is not None else default_params()

    def set_params(self, ctx: Context, params: pool_pb2.Params) -> None:
        # all-default params serialize to b"": written as field 1 = false explicitly, so that they read back as
        # stored (False), never as absent (the default, True)
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString() or b"\x08\x00")

    def deposits_to_pool(self, ctx: Context) -> bool:
        """Whether governance deposits that would be burned go to the pool instead (x/gov asks)."""
        return self.get_params(ctx).burned_deposits_to_pool

    # --- the pool's coins ---------------------------------------------------------------------------

    @property
    def address(self) -> bytes:
        return module_address(keys.POOL_ACCOUNT)

    def balance(self, ctx: Context) -> Coins:
        """What the pool holds (reads only: queries and invariants must not create its account)."""
        return self.bank.get_all_balances(ctx, self.address)

    def fund(self, ctx: Context, depositor: bytes, coins: Coins, source: str = keys.SOURCE_FUND) -> None:
        """``coins`` from ``depositor``'s spendable balance into the pool, counted under ``source``."""
        self._check_source(source)
        if not coins:
            return
        self.bank.send_coins(ctx, depositor, self.accounts.ensure_module_account(ctx, keys.POOL_ACCOUNT), coins)
        self._add(ctx, keys.source_prefix(source), coins, lambda denom: keys.inflow_key(source, denom))
        ctx.emit("fund_community_pool", depositor=bech32.encode(depositor), amount=str(coins), source=source)

    def fund_from_module(self, ctx: Context, module: str, coins: Coins, source: str) -> None:
        """``coins`` from module account ``module`` into the pool, counted under ``source``."""
        self.fund(ctx, self.accounts.ensure_module_account(ctx, module), coins, source)

    def spend(self, ctx: Context, recipient: bytes, coins: Coins) -> None:
        """Pay ``coins`` from the pool to ``recipient`` (the authority's MsgCommunityPoolSpend); ``sdk/5`` if
        the pool holds less, ``sdk/4`` if the recipient may not receive (a module account)."""
        self.bank.check_can_receive(recipient)
        self.bank.send_coins(ctx, self.accounts.ensure_module_account(ctx, keys.POOL_ACCOUNT), recipient, coins)
        self._add(ctx, keys.SPENT_PREFIX, coins, keys.spent_key)
        ctx.emit("community_pool_spend", recipient=bech32.encode(recipient), amount=str(coins))

    def _check_source(self, source: str) -> None:
        if not SOURCE_RE.match(source):
            raise ErrBadSource.wrap(f"inflow source {source!r} must be lowercase letters, digits and _")

    def _add(self, ctx: Context, prefix: bytes, coins: Coins, key_of: object) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        for denom, amount in coins:
            key = key_of(denom)  # type: ignore[operator]
            raw = store.get(key)
            store.set(key, str((int(raw) if raw else 0) + amount).encode())

    # --- the account ---------------------------------------------------------------------------------

    def inflows(self, ctx: Context) -> dict[str, Coins]:
        """What came in, by source (sorted)."""
        found: dict[str, list[tuple[str, int]]] = {}
        for key, raw in ctx.kv(keys.STORE_PREFIX).iterate(keys.INFLOW_PREFIX):
            n = key[1]
            source, denom = key[2 : 2 + n].decode(), key[2 + n :].decode()
            found.setdefault(source, []).append((denom, int(raw)))
        return {source: make_coins(pairs) for source, pairs in sorted(found.items())}

    def spent(self, ctx: Context) -> Coins:
        n = len(keys.SPENT_PREFIX)
        return make_coins([(k[n:].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.SPENT_PREFIX)])

    def set_inflow(self, ctx: Context, source: str, coins: Coins) -> None:
        """Genesis import: the total that came in from ``source``."""
        self._check_source(source)
        for denom, amount in coins:
            ctx.kv(keys.STORE_PREFIX).set(keys.inflow_key(source, denom), str(amount).encode())

    def set_spent(self, ctx: Context, coins: Coins) -> None:
        for denom, amount in coins:
            ctx.kv(keys.STORE_PREFIX).set(keys.spent_key(denom), str(amount).encode())

    def balance_accounted(self, ctx: Context) -> str | None:
        """Invariant ``pool/balance-accounted``: for each denom, balance = Σ inflows − spent."""
        expected: dict[str, int] = {}
        for coins in self.inflows(ctx).values():
            for denom, amount in coins:
                expected[denom] = expected.get(denom, 0) + amount
        for denom, amount in self.spent(ctx):
            expected[denom] = expected.get(denom, 0) - amount
        held = dict(self.balance(ctx))
        for denom in sorted(expected.keys() | held.keys()):
            if held.get(denom, 0) != expected.get(denom, 0):
                return (
                    f"community pool holds {held.get(denom, 0)}{denom} but inflows − spends = "
                    f"{expected.get(denom, 0)}{denom}"
                )
        return None
