"""GNK and any other denom: balances, supply and transfers. Amounts are ints, stored as decimal text."""

from __future__ import annotations

from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2

from sdk.coins import Coins, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInsufficientFunds, ErrUnauthorized
from x.bank import keys
from x.bank.expected_keepers import AccountKeeper


class BankKeeper:
    """Owns the ``bank/`` prefix. Supply changes only by mint and burn; sends conserve it."""

    def __init__(self, accounts: AccountKeeper, blocked: frozenset[bytes] = frozenset()) -> None:
        """``blocked``: addresses that no MsgSend may pay (module accounts, as the app wires them):
        coins sent there would sit outside what their module accounts for."""
        self.accounts = accounts
        self.blocked = blocked

    def check_can_receive(self, address: bytes) -> None:
        if address in self.blocked:
            raise ErrUnauthorized.wrap(f"{bech32.encode(address)} is not allowed to receive funds")

    def get_balance(self, ctx: Context, address: bytes, denom: str) -> int:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.balance_key(address, denom))
        return int(raw) if raw else 0

    def get_all_balances(self, ctx: Context, address: bytes) -> Coins:
        prefix = keys.address_balances_prefix(address)
        pairs = [
            (k[len(prefix):].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)
        ]
        return make_coins(pairs)

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
        return make_coins(
            [(k[n:].decode(), int(v)) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.SUPPLY_PREFIX)]
        )

    def _set_supply(self, ctx: Context, denom: str, amount: int) -> None:
        store = ctx.kv(keys.STORE_PREFIX)
        if amount == 0:
            store.delete(keys.supply_key(denom))
        else:
            store.set(keys.supply_key(denom), str(amount).encode())

    def subtract_coins(self, ctx: Context, address: bytes, coins: Coins) -> None:
        for denom, amount in coins:
            balance = self.get_balance(ctx, address, denom)
            if balance < amount:
                raise ErrInsufficientFunds.wrap(f"spendable balance {balance}{denom} is smaller than {amount}{denom}")
            self._set_balance(ctx, address, denom, balance - amount)

    def add_coins(self, ctx: Context, address: bytes, coins: Coins) -> None:
        self.accounts.ensure_account(ctx, address)
        for denom, amount in coins:
            self._set_balance(ctx, address, denom, self.get_balance(ctx, address, denom) + amount)

    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None:
        self.subtract_coins(ctx, sender, coins)
        self.add_coins(ctx, recipient, coins)
        ctx.emit("transfer", recipient=bech32.encode(recipient), sender=bech32.encode(sender), amount=str(coins))

    def mint_coins(self, ctx: Context, recipient: bytes, coins: Coins) -> None:
        self.add_coins(ctx, recipient, coins)
        for denom, amount in coins:
            self._set_supply(ctx, denom, self.get_supply(ctx, denom) + amount)
        ctx.emit("coinbase", minter=bech32.encode(recipient), amount=str(coins))

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
