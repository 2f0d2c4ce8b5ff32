"""What PoC V2 did in this host, the ``"poc"`` object of ``GET /v1/executor/status``: the payloads it kept and
served, as an executor or as an accuser (``PayloadCounts``); as a validator or voter, the verdicts it reached and
sent (``PocCounts``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class PayloadCounts:
    payloads_kept: int = 0
    """Payloads this process kept: of the answers it finished, and of those it checked as the drawn validator
    (for its dispute's voters)."""
    payloads_not_kept: int = 0
    """Payloads that could not be written (each logged): the validations of those answers will fail."""
    payloads_served: int = 0
    payloads_refused: int = 0
    """Payload requests refused (malformed, unsigned, not from a host drawn to fetch it here, unknown id)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PocCounts:
    matched: int = 0
    """Re-executions its ML node matched."""
    mismatched: int = 0
    """Re-executions its ML node did not match (a verdict MISMATCH with the node's score)."""
    unserved: int = 0
    """Payloads the executor did not serve in time (MISMATCH, score 0)."""
    tampered: int = 0
    """Payloads that were not what the chain's hashes commit to, or not an answer one can re-execute (MISMATCH,
    score 0)."""
    accuser_served: int = 0
    """Votes judged on the payload a dispute's accuser kept, the executor serving none that matches the chain's
    hashes."""
    accuser_tampered: int = 0
    """Payloads a dispute's accuser served that did not match the chain's hashes: refused (the executor is not
    judged on them)."""
    verdicts_sent: int = 0
    """``MsgValidateInference``s in transactions CheckTx took (a verdict sent again counts again)."""
    late: int = 0
    """Inferences drawn for it whose deadline passed before a verdict went out."""
    errors: int = 0
    """Duty steps that failed (its ML node or its chain node did not answer; each logged, tried again)."""
    last: list[dict[str, Any]] = field(default_factory=list)
    """The last few verdicts: ``{id, verdict, score, reason}``."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def record(self, entry: dict[str, Any]) -> None:
        self.last = [*self.last[-7:], entry]
