"""``SprintConfig``: how the host races and validates (host/README.md, "The race duties"), and the test-only
faults (``FAULTS``) a localnet uses to see that the chain catches a cheating host or a lazy validator."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Fault = Literal["inflate", "borrow", "lazy-validator"]
FAULTS: tuple[Fault, ...] = ("inflate", "borrow", "lazy-validator")
"""TEST ONLY. ``inflate``: commit 20% more leaves than the host has proofs; ``borrow``: race with another key
than the host's own; ``lazy-validator``: judge every other host valid without checking anything."""

COMMIT_GAS = 200_000
"""Gas of a ``MsgSprintCommit`` transaction."""
VALIDATION_GAS = 100_000
"""Gas per ``MsgSprintValidation`` in the validation transaction."""


class SprintConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    home: Path
    """Where the race journals go (``sprint-E.json``): the host's home."""
    chunk: int = Field(4096, ge=1, le=65536)
    """Nonces per ``/v1/sprint/run`` call; a commit follows each chunk that found proofs."""
    max_nonces: int | None = Field(None, ge=1)
    """Nonces raced per epoch at most (None: until the stage's margin): a localnet whose ML nodes share a few cores
    with its validators races a budget rather than the whole stage."""
    margin_blocks: int = Field(2, ge=0)
    """Racing stops once the chain is this many blocks from the race-validation stage, so the last commit lands
    in the race stage."""
    poll_interval_s: float = Field(0.5, gt=0)
    """How often the follower reads the chain's epoch and stage when it has nothing to do."""
    mlnode_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for the host's own ML node (a /run chunk of the default race takes seconds)."""
    fetch_timeout_s: float = Field(10.0, gt=0)
    """The longest wait for another host's openings."""
    fetch_attempts: int = Field(3, ge=1)
    """Tries at another host's openings (its chain node may not have the randomness yet) before it counts as
    failing every sample."""
    commit_gas: int = Field(COMMIT_GAS, ge=1)
    validation_gas: int = Field(VALIDATION_GAS, ge=1)
    fault: Fault | None = None
    """TEST ONLY (``FAULTS``): never set on a real host; the chain slashes and jails what it does."""
