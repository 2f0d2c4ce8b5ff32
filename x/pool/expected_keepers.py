"""What x/pool needs from x/auth and x/bank."""

from __future__ import annotations

from typing import Protocol

from sdk.coins import Coins
from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...
    def check_can_receive(self, address: bytes) -> None: ...
