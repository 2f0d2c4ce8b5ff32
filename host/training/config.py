"""``[training]`` of ``HOME/host.toml``: this host's part in training runs on the network (``host/README.md``,
"Training duties").

    [training]
    replay = true           # replay the checkpoints the chain draws this host for and send the verdicts (default)
    claim = true            # claim this host's pay for its VALID checkpoints (default)
    runs = "training"       # where this host's run directories are (relative to HOME); their replay data is served
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class TrainingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    replay: bool = True
    """Replay every checkpoint x/learning draws this host to verify (``Query/Assigned``) and send its verdict."""
    claim: bool = True
    """Claim this host's share of every VALID checkpoint it committed (``Query/Owed``)."""
    runs: str = "training"
    """The run directories this host trains in (``gonkad train --out`` under it); each round's replay data of this
    host's own workers is served at ``GET /v1/training/<run>/<round>/<worker>/<file>``."""
    cache: str = "training-replays"
    """Where the replay data fetched from other hosts is kept while it is replayed."""
    poll_s: float = Field(2.0, gt=0)
    threads: int | None = Field(None, ge=1)
    """Replay threads; None: the worker's own count, which makes an exact match possible."""
    fetch_attempts: int = Field(3, ge=1)
    """A worker that serves no replay data, or data that does not replay, after this many tries is judged invalid:
    its round cannot be checked."""
    fetch_timeout_s: float = Field(60.0, gt=0)
    replay_timeout_s: float = Field(600.0, gt=0)
    """The longest a replay (``gonkad train verify``) may run."""


def under(home: Path, path: str) -> Path:
    """``path``, relative to ``home`` unless absolute."""
    return home / path
