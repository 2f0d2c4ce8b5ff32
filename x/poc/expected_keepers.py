"""What x/poc needs from x/stake, x/bls, x/inference, x/epochs, x/slashing and x/rewards."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.context import Context


class StakeKeeper(Protocol):
    def validator_powers(self, ctx: Context) -> dict[bytes, int]: ...


class BlsKeeper(Protocol):
    def beacon(self, ctx: Context, height: int | None = None) -> bytes | None: ...
    def last_commitment(self, ctx: Context) -> tuple[int, bytes] | None: ...


class InferenceKeeper(Protocol):
    """Which hosts can re-execute an inference (those with a node serving its model), the score a match of its
    model must reach, and the refund of an answer found wrong."""

    def serves(self, ctx: Context, operator: bytes, model: str) -> bool: ...

    def verify_threshold(self, ctx: Context, model: str) -> int:
        """The model's threshold in parts per million (its governance parameter, or the default)."""

    def invalidate(
        self, ctx: Context, inference_id: bytes, executor: bytes, requester: bytes, denom: str, payment: int
    ) -> int:
        """Take the payment back from ``executor`` and refund ``requester``; the amount refunded."""


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...


class SlashingKeeper(Protocol):
    """A dispute's loser pays ``share`` of its collateral to the honest side, pro rata to their power."""

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
    """Validation work counts toward the epoch's rewards as inference work does."""

    def report_work(self, ctx: Context, epoch: int, host: bytes, units: int) -> None: ...
