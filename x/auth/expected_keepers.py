"""What x/auth needs from other modules, and no more."""

from __future__ import annotations

from typing import Protocol

from sdk.context import Context
from sdk.coins import Coins


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
