"""``SprintCounts``: what the race duties did, the ``"sprint"`` object of ``GET /v1/executor/status``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SprintCounts:
    epoch: int = 0
    stage: str = ""
    nonces_raced: int = 0
    """Nonces this process ran on its ML node (all epochs)."""
    proofs: int = 0
    """Proofs of the epoch being raced (a restart reloads them)."""
    last_commit: dict[str, Any] | None = None
    """``{epoch, count, height, tx}`` of the last ``MsgSprintCommit`` CheckTx took; height: when it was sent."""
    commits: int = 0
    validations_sent: int = 0
    """``MsgSprintValidation``s in transactions CheckTx took."""
    openings_served: int = 0
    skipped: list[str] = field(default_factory=list)
    """Why a duty was left out (the ML node races another race than the chain's, no power, …): the last few."""
    errors: int = 0
    """Duty steps that failed (each logged; the duty is tried again within its stage)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def skip(self, reason: str) -> None:
        self.skipped = [*self.skipped[-7:], reason]
