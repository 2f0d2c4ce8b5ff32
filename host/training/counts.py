"""``TrainingCounts``: what the training duty did, the ``"training"`` object of ``GET /v1/executor/status``."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class TrainingCounts:
    replayed: int = 0
    """Rounds replayed (their replay data served and fetched)."""
    verdicts_valid: int = 0
    verdicts_invalid: int = 0
    """Including those on workers that served no replay data."""
    not_served: int = 0
    """Fetches of replay data that no URL of the worker answered."""
    not_replayed: int = 0
    """Fetched replay data that ``gonkad train verify`` could not replay."""
    claims: int = 0
    """Claims of this host's pay sent."""
    errors: int = 0
    """Steps that failed (the chain node or a replay): tried again at the next poll."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
