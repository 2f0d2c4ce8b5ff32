"""``Counts``: what the executor proxy did with the requests it got, reported by ``GET /v1/executor/status``."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Counts:
    served: int = 0
    """Answers relayed whole and finished (handed to the finisher)."""
    refused: int = 0
    """Requests whose forwarded signature did not check."""
    unpaid: int = 0
    """Requests refused because the chain would not pay for them (no start, or no funds behind it)."""
    abandoned: int = 0
    """Answers the TA left before they reached it (it died, or its client left): never finished."""
    replayed: int = 0
    """Kept answers sent again to the same signed request (``Executor.answer_again``)."""
    unfinished: int = 0
    """Answers relayed whole or in part that cannot be finished (no usage; a stream that broke): refunded when the
    inference expires."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
