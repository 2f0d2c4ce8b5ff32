"""What x/learning needs from x/auth, x/bank, x/vesting, x/stake, x/slashing, x/rewards, x/epochs and x/poc."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.coins import Coins
from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...


class VestingKeeper(Protocol):
    def vest(self, ctx: Context, from_module: str, to: bytes, coins: Coins, epochs: int) -> None:
        """Move ``coins`` from module account ``from_module`` to ``to``, locked and released over ``epochs``."""


class StakeKeeper(Protocol):
    def get_host(self, ctx: Context, operator: bytes) -> Any:
        """The host registered by ``operator`` (``gonka.stake.v1.Host``), or None."""

    def validator_powers(self, ctx: Context) -> dict[bytes, int]: ...


class SlashingKeeper(Protocol):
    """A checkpoint's loser pays ``share`` of its collateral to the winning side, pro rata to their weight."""

    def slash(
        self,
        ctx: Context,
        operator: bytes,
        share: Fraction,
        reason: str,
        beneficiaries: Sequence[tuple[bytes, int]],
        infraction_height: int = 0,
    ) -> int: ...


class RewardsKeeper(Protocol):
    """Training work counts toward the epoch's rewards as inference work does."""

    def report_work(self, ctx: Context, epoch: int, host: bytes, units: int) -> None: ...


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...


class BeaconKeeper(Protocol):
    """x/poc's beacon: x/bls's aggregate signature of a height, or its documented fallback."""

    def get_beacon(self, ctx: Context, height: int) -> bytes: ...
