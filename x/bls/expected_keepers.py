"""What x/bls needs from x/stake, and what it asks of the modules that give the votes extras to sign."""

from __future__ import annotations

from typing import Protocol

from protogen.gonka.stake.v1 import stake_pb2
from sdk.context import Context


class StakeKeeper(Protocol):
    def get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host | None: ...
    def host_by_consensus_address(self, ctx: Context, consensus_addr: bytes) -> bytes | None: ...
    def validator_powers(self, ctx: Context) -> dict[bytes, int]: ...


class SignedExtraProvider(Protocol):
    """A module that may ask a height's votes to sign a digest (app.py registers it by name)."""

    def signed_extra(self, ctx: Context, height: int) -> bytes:
        """The 32-byte digest the votes of ``height`` sign (b"": none), asked in block ``height - 1``'s end, so
        from the state that block leaves."""
        ...
