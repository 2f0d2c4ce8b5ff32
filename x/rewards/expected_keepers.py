"""What x/rewards needs from x/auth, x/bank, x/epochs, x/stake, x/pool and x/vesting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.coins import Coins
from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class BankKeeper(Protocol):
    def mint_coins(self, ctx: Context, module: str, coins: Coins) -> None: ...
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...


class StakeKeeper(Protocol):
    def weights_epoch(self, ctx: Context) -> int | None: ...
    def epoch_weights(self, ctx: Context, epoch: int) -> dict[bytes, int]: ...


class PoolKeeper(Protocol):
    def fund_from_module(self, ctx: Context, module: str, coins: Coins, source: str) -> None: ...


class VestingKeeper(Protocol):
    def vest(self, ctx: Context, from_module: str, to: bytes, coins: Coins, epochs: int) -> None:
        """Move ``coins`` from module account ``from_module`` to ``to``, locked and released over ``epochs``."""

    def vesting_epochs(self, ctx: Context) -> int: ...

    def schedule_locked(self, ctx: Context, address: bytes) -> Mapping[str, int]:
        """What epoch schedules (``vest``) still lock of ``address``'s coins, by denom."""


class Standing(Protocol):
    """x/poc: a host found cheating (INVALID) earns no reward for the epoch; its share goes to the pool."""

    def is_invalid(self, ctx: Context, host: bytes) -> bool: ...
