"""What x/bls needs from x/stake."""

from __future__ import annotations

from typing import Protocol

from protogen.gonka.stake.v1 import stake_pb2
from sdk.context import Context


class StakeKeeper(Protocol):
    def get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host | None: ...
    def host_by_consensus_address(self, ctx: Context, consensus_addr: bytes) -> bytes | None: ...
