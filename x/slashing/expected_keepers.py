"""What x/slashing needs from x/stake, x/bank, x/auth and x/pool."""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol

from protogen.gonka.stake.v1 import stake_pb2
from sdk.coins import Coins
from sdk.context import Context


class StakeKeeper(Protocol):
    def host_by_consensus_address(self, ctx: Context, consensus_addr: bytes) -> bytes | None: ...
    def get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host | None: ...
    def get_params(self, ctx: Context) -> stake_pb2.Params: ...
    def jail(self, ctx: Context, operator: bytes) -> None: ...
    def unjail(self, ctx: Context, operator: bytes) -> None: ...
    def slash_collateral(
        self, ctx: Context, operator: bytes, fraction: Fraction, destination: bytes, infraction_height: int = 0
    ) -> int: ...


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_balance(self, ctx: Context, address: bytes, denom: str) -> int: ...


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class PoolKeeper(Protocol):
    def fund_from_module(self, ctx: Context, module: str, coins: Coins, source: str) -> None: ...
