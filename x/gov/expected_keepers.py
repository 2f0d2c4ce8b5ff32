"""What x/gov needs of other modules and of the app's router, as protocols (the app wires the real ones)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message

from sdk.coins import Coins
from sdk.context import Context


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def burn_coins(self, ctx: Context, module: str, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...
    def check_can_receive(self, address: bytes) -> None: ...


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class StakeKeeper(Protocol):
    def validator_powers(self, ctx: Context) -> dict[bytes, int]:
        """The validator set in force: operator account -> voting power."""
        ...


class PoolKeeper(Protocol):
    """x/pool (the community pool): where "burned" deposits go when it says so, and where cancellation
    charges go when ``proposal_cancel_dest`` is its account."""

    @property
    def address(self) -> bytes: ...
    def deposits_to_pool(self, ctx: Context) -> bool: ...
    def fund_from_module(self, ctx: Context, module: str, coins: Coins, source: str) -> None: ...


PackedSigners = Callable[[AnyPb], list[bytes]]
"""The router's ``packed_signers`` (sdk/baseapp/transactions.py): decode and validate a packed message, return its
signers, or raise its ABCIError."""
ExecutePacked = Callable[[Context, bytes, Sequence[AnyPb]], list[Message]]
"""The router's ``execute_packed`` (sdk/baseapp/transactions.py): run packed messages as a signer, atomically, or raise
the failing one's ABCIError."""
