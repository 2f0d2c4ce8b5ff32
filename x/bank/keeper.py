"""GNK and any other denom: balances, supply and transfers. Amounts are ints, stored as decimal text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2, genesis_pb2

from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInsufficientFunds, ErrUnauthorized, ErrUnknownAddress
from sdk.params import GOV_AUTHORITY
from x.bank import keys
from x.bank.errors import ErrSendDisabled
from x.bank.expected_keepers import AccountKeeper

LockedCoins = Callable[[Context, bytes], Coins]
"""What an account may not spend yet (a vesting schedule's locked part), set by the module that locks."""


class DelegationTracker(Protocol):
    """The locking module told of collateral deposits and returns (``delegate_coins``, ``undelegate_coins``),
    so it can record how much of what was deposited was locked (the SDK's vesting TrackDelegation)."""

    def track_delegation(self, ctx: Context, address: bytes, coins: Coins) -> None: ...
    def track_undelegation(self, ctx: Context, address: bytes, coins: Coins) -> None: ...


class BankKeeper:
    """Owns the ``bank/`` prefix. Supply changes only by mint and burn; sends conserve it."""

    def __init__(
        self, accounts: AccountKeeper, blocked: frozenset[bytes] = frozenset(), authority: bytes = GOV_AUTHORITY
    ) -> None:
        """``blocked``: addresses that no MsgSend may pay (module accounts, as the app wires them):
        coins sent there would sit outside what their module accounts for; ``authority``: who may change
        the params (``MsgUpdateParams``)."""
        self.accounts = accounts
        self.blocked = blocked
        self.authority = authority
        self.locked_coins: LockedCoins | None = None
        self.delegation_tracker: DelegationTracker | None = None

    def set_locked_coins_hook(self, hook: LockedCoins) -> None:
        """Install the one module that locks coins (vesting): spends and the spendable queries subtract what
        it reports. Set once, at app wiring."""
        if self.locked_coins is not None:
            raise ValueError("a locked-coins hook is already set")
        self.locked_coins = hook

    def set_delegation_hooks(self, tracker: DelegationTracker) -> None:
        """Install the locking module's delegation tracking (vesting), told of every ``delegate_coins`` and
        ``undelegate_coins``. Set once, at app wiring."""
        if self.delegation_tracker is not None:
            raise ValueError("a delegation tracker is already set")
        self.delegation_tracker = tracker

    def delegate_coins(self, ctx: Context, sender: bytes, recipient_module_address: bytes, coins: Coins) -> None:
        """A collateral deposit into a module account: unlike a send it may use locked coins (the SDK's
        ``DelegateCoins``), never more than the balance (``sdk/5``). The tracker records the locked part."""
        for denom, amount in coins:
            balance = self.get_balance(ctx, sender, denom)
            if balance < amount:
                raise ErrInsufficientFunds.wrap(f"balance {balance}{denom} is smaller than {amount}{denom}")
        if self.delegation_tracker is not None:
            self.delegation_tracker.track_delegation(ctx, sender, coins)
        for denom, amount in coins:
            self._set_balance(ctx, sender, denom, self.get_balance(ctx, sender, denom) - amount)
        self.add_coins(ctx, recipient_module_address, coins)
        ctx.emit(
            "transfer",
            recipient=bech32.encode(recipient_module_address),
            sender=bech32.encode(sender),
            amount=str(coins),
        )

    def undelegate_coins(self, ctx: Context, module_address: bytes, recipient: bytes, coins: Coins) -> None:
        """Collateral paid back from a module account (the SDK's ``UndelegateCoins``): the tracker lowers what
        it recorded as deposited, so coins still scheduled come back locked."""
        self.subtract_coins(ctx, module_address, coins)
        self.add_coins(ctx, recipient, coins)
        if self.delegation_tracker is not None:
            self.delegation_tracker.track_undelegation(ctx, recipient, coins)
        ctx.emit(
            "transfer", recipient=bech32.encode(recipient), sender=bech32.encode(module_address), amount=str(coins)
        )

    def is_send_enabled(self, ctx: Context, denom: str) -> bool:
        """The denom's own ``send_enabled`` entry in the params, else ``default_send_enabled``."""
        params = self.get_params(ctx)
        for entry in params.send_enabled:
            if entry.denom == denom:
                return entry.enabled
        return params.default_send_enabled

    def check_send_enabled(self, ctx: Context, coins: Coins) -> None:
        """MsgSend and MsgMultiSend move only denoms whose transfers are enabled (``bank/5``)."""
        for denom, _ in coins:
            if not self.is_send_enabled(ctx, denom):
                raise ErrSendDisabled.wrap(f"{denom} transfers are currently disabled")

    def check_can_receive(self, address: bytes) -> None:
        if address in self.blocked:
            raise ErrUnauthorized.wrap(f"{bech32.encode(address)} is not allowed to receive funds")

    def get_balance(self, ctx: Context, address: bytes, denom: str) -> int:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.balance_key(address, denom))
        return int(raw) if raw else 0

    def get_all_balances(self, ctx: Context, address: bytes) -> Coins:
        prefix = keys.address_balances_prefix(address)
        pairs = [(k[len(prefix) :].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]
        return make_coins(pairs)

    def spendable_coins(self, ctx: Context, address: bytes) -> Coins:
        """What ``address`` may spend now: its balances less the locked coins the hook reports (none until a
        vesting module sets the hook); the spendable queries and every spend read this."""
        locked = self._locked(ctx, address)
        balances = self.get_all_balances(ctx, address)
        return make_coins([(d, a - locked.get(d, 0)) for d, a in balances if a > locked.get(d, 0)])

    def _locked(self, ctx: Context, address: bytes) -> dict[str, int]:
        return {} if self.locked_coins is None else dict(self.locked_coins(ctx, address))

    def _spendable(self, ctx: Context, address: bytes, denom: str) -> int:
        return max(0, self.get_balance(ctx, address, denom) - self._locked(ctx, address).get(denom, 0))

    def _set_balance(self, ctx: Context, address: bytes, denom: str, amount: int) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        if amount == 0:
            store.delete(keys.balance_key(address, denom))
        else:
            store.set(keys.balance_key(address, denom), str(amount).encode())

    def get_supply(self, ctx: Context, denom: str) -> int:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.supply_key(denom))
        return int(raw) if raw else 0

    def get_total_supply(self, ctx: Context) -> Coins:
        n = len(keys.SUPPLY_PREFIX)
        return make_coins([(k[n:].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.SUPPLY_PREFIX)])

    def _set_supply(self, ctx: Context, denom: str, amount: int) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        if amount == 0:
            store.delete(keys.supply_key(denom))
        else:
            store.set(keys.supply_key(denom), str(amount).encode())

    def subtract_coins(self, ctx: Context, address: bytes, coins: Coins) -> None:
        """Take coins from what ``address`` may spend; locked coins stay (``sdk/5`` if short)."""
        for denom, amount in coins:
            spendable = self._spendable(ctx, address, denom)
            if spendable < amount:
                raise ErrInsufficientFunds.wrap(f"spendable balance {spendable}{denom} is smaller than {amount}{denom}")
            self._set_balance(ctx, address, denom, self.get_balance(ctx, address, denom) - amount)

    def add_coins(self, ctx: Context, address: bytes, coins: Coins) -> None:
        self.accounts.ensure_account(ctx, address)
        for denom, amount in coins:
            self._set_balance(ctx, address, denom, self.get_balance(ctx, address, denom) + amount)

    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None:
        self.subtract_coins(ctx, sender, coins)
        self.add_coins(ctx, recipient, coins)
        ctx.emit("transfer", recipient=bech32.encode(recipient), sender=bech32.encode(sender), amount=str(coins))

    def credit_genesis(self, ctx: Context, recipient: bytes, coins: Coins) -> None:
        """A genesis balance: coins that come into being in their account, adding to the supply."""
        self.add_coins(ctx, recipient, coins)
        self._add_supply(ctx, coins, 1)
        self._count(ctx, keys.GENESIS_SUPPLY_PREFIX, coins)

    def _count(self, ctx: Context, prefix: bytes, coins: Coins) -> None:
        """Add to one of the supply's records: at genesis, minted, burned (by denom)."""
        store = ctx.kv(keys.STORE_PREFIX)
        for denom, amount in coins:
            store.set(prefix + denom.encode(), str(self.counted(ctx, prefix, denom) + amount).encode())

    def counted(self, ctx: Context, prefix: bytes, denom: str) -> int:
        """A supply record of ``denom``: ``keys.GENESIS_SUPPLY_PREFIX``, ``MINTED_PREFIX`` or ``BURNED_PREFIX``."""
        raw = ctx.kv(keys.STORE_PREFIX).get(prefix + denom.encode())
        return int(raw) if raw else 0

    def _add_supply(self, ctx: Context, coins: Coins, sign: int) -> None:
        for denom, amount in coins:
            self._set_supply(ctx, denom, self.get_supply(ctx, denom) + sign * amount)

    def _module_with(self, ctx: Context, module: str, permission: str, action: str) -> bytes:
        """The address of module account ``module`` if the app declared it with ``permission``."""
        if module not in self.accounts.module_accounts:
            raise ErrUnknownAddress.wrap(f"module account {module} does not exist")
        if not self.accounts.has_permission(module, permission):
            raise ErrUnauthorized.wrap(f"module account {module} does not have permissions to {action} tokens")
        return self.accounts.ensure_module_account(ctx, module)

    def mint_coins(self, ctx: Context, module: str, coins: Coins) -> None:
        """New coins into module account ``module``, which must have the ``minter`` permission."""
        address = self._module_with(ctx, module, "minter", "mint")
        self.add_coins(ctx, address, coins)
        self._add_supply(ctx, coins, 1)
        self._count(ctx, keys.MINTED_PREFIX, coins)
        ctx.emit("coinbase", minter=bech32.encode(address), amount=str(coins))

    def burn_coins(self, ctx: Context, module: str, coins: Coins) -> None:
        """Destroy coins module account ``module`` holds (it must have the ``burner`` permission): the supply
        falls by as much."""
        address = self._module_with(ctx, module, "burner", "burn")
        self.subtract_coins(ctx, address, coins)
        self._add_supply(ctx, coins, -1)
        self._count(ctx, keys.BURNED_PREFIX, coins)
        ctx.emit("burn", burner=bech32.encode(address), amount=str(coins))

    def get_params(self, ctx: Context) -> bank_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return bank_pb2.Params.FromString(raw) if raw else bank_pb2.Params()

    def set_params(self, ctx: Context, params: bank_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def set_denom_metadata(self, ctx: Context, metadata: bank_pb2.Metadata) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.metadata_key(metadata.base), metadata.SerializeToString())

    def get_denom_metadata(self, ctx: Context, denom: str) -> bank_pb2.Metadata | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.metadata_key(denom))
        return bank_pb2.Metadata.FromString(raw) if raw else None

    def all_balances(self, ctx: Context) -> list[genesis_pb2.Balance]:
        """Every non-zero balance, one entry per address in address-byte order, denoms sorted: for export."""
        balances: list[genesis_pb2.Balance] = []
        last = b""
        for key, amount in ctx.kv(keys.STORE_PREFIX).iterate(keys.BALANCES_PREFIX):
            n = key[1]
            address, denom = key[2 : 2 + n], key[2 + n :].decode()
            if address != last or not balances:
                balances.append(genesis_pb2.Balance(address=bech32.encode(address)))
                last = address
            balances[-1].coins.add(denom=denom, amount=amount.decode())
        return balances

    def all_denom_metadata(self, ctx: Context) -> list[bank_pb2.Metadata]:
        """Every denom's metadata in denom order: for export."""
        store = ctx.kv(keys.STORE_PREFIX)
        return [bank_pb2.Metadata.FromString(v) for _, v in store.iterate(keys.DENOM_METADATA_PREFIX)]
