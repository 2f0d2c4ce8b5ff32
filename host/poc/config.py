"""How the host keeps and serves its answers' payloads (``PayloadConfig``) and how it validates the inferences
the chain draws for it (``PocConfig``), with the test-only fault (``FAULTS``) a localnet uses to see the chain
settle a false accusation (host/README.md, "PoC V2 duties")."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Fault = Literal["accuse"]
FAULTS: tuple[Fault, ...] = ("accuse",)
"""TEST ONLY. ``accuse``: judge every inference drawn for this host MISMATCH (score 0), fetching and re-executing
nothing, honest or not."""

VALIDATE_GAS = 150_000
"""Gas per ``MsgValidateInference`` that is the drawn validator's verdict (a match grows the executor's record, a
mismatch opens the dispute): measured 57,342 (MATCH) / 54,801 (MISMATCH) alone in a transaction, less per message
in larger ones (``bench/bench_verdict_gas.py``, bench/RESULTS.md "Gas of a verdict")."""
VOTE_GAS = 400_000
VOTE_GAS_PER_VOTER = 25_000
"""Gas per dispute vote: ``VOTE_GAS`` + ``VOTE_GAS_PER_VOTER`` × the dispute's voters. Any vote may be the one that
decides the dispute, and that one settles it in the same message: the slash, a pay-out per winning voter and, when
the executor loses, the payment clawed back through x/vesting. Measured with 2 and 3 voters: 54,702–62,431 for a
vote that decides nothing, 161,205–163,954 for one that clears the executor, 255,331–258,212 for one that
invalidates the answer (about 3,000 more per voter)."""


class PayloadConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    retention_s: float = Field(3600.0, gt=0)
    """How long a payload is kept after its answer (or, by an accuser, after it checked it): far above what a
    validator and a dispute's voters need (x/poc's draw delay, validation window, voters' draw delay and dispute
    window, 1 + 20 + 1 + 20 blocks by default: a few minutes at a few seconds a block, 42 minutes even at a minute
    a block)."""
    prune_interval_s: float = Field(60.0, gt=0)
    """How often keeping a payload also deletes those past ``retention_s``."""
    request_window_s: float = Field(60.0, gt=0)
    """A payload request's timestamp must be within this of the host's clock (either way)."""


class PocConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    home: Path
    """Where the verdict journal goes (``poc-verdicts.json``): the host's home."""
    poll_interval_s: float = Field(1.0, gt=0)
    """How often the duty reads ``Assigned`` when it has nothing to do."""
    verify_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for this host's own ML node's ``/v1/verify``."""
    fetch_timeout_s: float = Field(10.0, gt=0)
    """The longest wait for the executor's payload route."""
    fetch_attempts: int = Field(3, ge=1)
    """Tries at the executor's payload (each over all its registered URLs) before it counts as not served: a
    failed validation. Its chain node may not have seen the draw yet, so the tries are ``retry_s`` apart."""
    retry_s: float = Field(1.0, ge=0)
    """The pause before trying a payload again (other inferences are judged meanwhile)."""
    margin_blocks: int = Field(2, ge=0)
    """When the deadline is this close, a payload not fetched yet is judged not served at once, so the verdict
    still lands."""
    resend_blocks: int = Field(3, ge=1)
    """Blocks a sent verdict has to land in (CheckTx took it) before it is sent again."""
    max_batch: int = Field(16, ge=1)
    """Verdicts per transaction at most."""
    validate_gas: int = Field(VALIDATE_GAS, ge=1)
    vote_gas: int = Field(VOTE_GAS, ge=1)
    vote_gas_per_voter: int = Field(VOTE_GAS_PER_VOTER, ge=0)
    threshold_ttl_s: float = Field(60.0, ge=0)
    """How long a model's verification threshold read from the chain is used before it is read again: governance
    may change it, and a verdict judged with an older, lower one could be refused (``poc/11``)."""
    fault: Fault | None = None
    """TEST ONLY (``FAULTS``): never set on a real host; a false accusation is what a dispute slashes."""
