"""What x/sprint needs from x/auth, x/epochs, x/stake, x/slashing, x/bls and x/inference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Protocol

from protogen.gonka.bls.v1 import bls_pb2
from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.stake.v1 import stake_pb2
from sdk.context import Context


class AccountKeeper(Protocol):
    def get_pubkey(self, ctx: Context, address: bytes) -> bytes | None: ...


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...
    def current_stage(self, ctx: Context) -> int: ...


class StakeKeeper(Protocol):
    def get_host(self, ctx: Context, operator: bytes) -> stake_pb2.Host | None: ...
    def validator_powers(self, ctx: Context) -> dict[bytes, int]: ...
    def weights_epoch(self, ctx: Context) -> int | None: ...
    def epoch_weights(self, ctx: Context, epoch: int) -> dict[bytes, int]: ...
    def set_epoch_weights(self, ctx: Context, epoch: int, weights: Mapping[bytes, int]) -> None: ...
    def jail(self, ctx: Context, operator: bytes) -> None: ...


class SlashingKeeper(Protocol):
    def slash(
        self,
        ctx: Context,
        operator: bytes,
        share: Fraction,
        reason: str,
        beneficiaries: Sequence[tuple[bytes, int]],
        infraction_height: int = 0,
    ) -> int: ...


class BlsKeeper(Protocol):
    def beacon(self, ctx: Context, height: int | None = None) -> bytes | None: ...
    def last_commitment(self, ctx: Context) -> tuple[int, bytes] | None: ...
    def certificate(self, ctx: Context, height: int) -> bls_pb2.Certificate | None: ...
    def validator_set(self, ctx: Context, set_hash: bytes) -> bls_pb2.ValidatorSet | None: ...
    def handoffs(
        self, ctx: Context, after: int = 0, through: int = 0, limit: int = 0
    ) -> list[bls_pb2.ValidatorSetHandoff]: ...


class InferenceKeeper(Protocol):
    """The work side of an epoch's summary (x/inference's EpochWork; its on_epoch_end makes the roots final)."""

    def epoch_works_of(self, ctx: Context, epoch: int) -> list[inference_pb2.EpochWork]: ...


class Standing(Protocol):
    """x/poc: a host found cheating at inference (INVALID) gets weight 0 at the next set validators."""

    def is_invalid(self, ctx: Context, host: bytes) -> bool: ...
