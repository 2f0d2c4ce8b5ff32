"""What x/poc needs from x/stake, x/bls and x/inference."""

from __future__ import annotations

from typing import Protocol

from sdk.context import Context


class StakeKeeper(Protocol):
    def validator_powers(self, ctx: Context) -> dict[bytes, int]: ...


class BlsKeeper(Protocol):
    def beacon(self, ctx: Context, height: int | None = None) -> bytes | None: ...
    def last_commitment(self, ctx: Context) -> tuple[int, bytes] | None: ...


class InferenceKeeper(Protocol):
    """Which hosts can re-execute an inference: those with a node serving its model."""

    def serves(self, ctx: Context, operator: bytes, model: str) -> bool: ...
