"""What x/vesting needs from x/bank and x/epochs."""

from __future__ import annotations

from typing import Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.coins import Coins
from sdk.context import Context


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_balance(self, ctx: Context, address: bytes, denom: str) -> int: ...


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...
