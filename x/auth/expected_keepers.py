"""What x/auth needs from other modules, and no more."""

from __future__ import annotations

from typing import Protocol

from sdk.coins import Coins
from sdk.context import Context


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...
