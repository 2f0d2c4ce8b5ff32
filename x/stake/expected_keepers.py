"""What x/stake needs from x/auth, x/bank and x/epochs."""

from __future__ import annotations

from typing import Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.coins import Coins
from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_balance(self, ctx: Context, address: bytes, denom: str) -> int: ...
    def delegate_coins(self, ctx: Context, sender: bytes, recipient_module_address: bytes, coins: Coins) -> None:
        """A collateral deposit: may use locked (vesting) coins, never more than the balance."""

    def undelegate_coins(self, ctx: Context, module_address: bytes, recipient: bytes, coins: Coins) -> None:
        """Collateral paid back: what is still scheduled comes back locked."""


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...
