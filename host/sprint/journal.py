"""``RaceJournal``: one epoch's race on disk, ``H/sprint-E.json``, so a restarted host serves openings for what
it committed, never commits a smaller count, and races on from the next nonce. Rewritten whole (new file,
fsynced, renamed over the old) before and after each commit."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from host.sprint.node import Proof

logger = logging.getLogger("gonka.host.sprint")


@dataclass
class Commit:
    """One ``MsgSprintCommit``: its root and count, how many of the race's proofs it covers (``real``; an
    inflating host commits more leaves than that), and, once CheckTx took it, its tx and the height it was sent
    at. Written before the send, so a host that dies in between still knows the list behind a root."""

    root: str
    count: int
    real: int
    tx: str = ""
    height: int = 0

    @property
    def accepted(self) -> bool:
        return bool(self.tx)


@dataclass
class EpochRace:
    """An epoch's race: the seed and the key raced with, the next nonce, every proof found, every commit."""

    epoch: int
    seed: str
    pubkey: str
    next_nonce: int = 0
    proofs: list[Proof] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)

    def committed_count(self) -> int:
        return max((c.count for c in self.commits if c.accepted), default=0)

    def last_commit(self) -> Commit | None:
        return next((c for c in reversed(self.commits) if c.accepted), None)

    def commit_of(self, root: bytes) -> Commit | None:
        return next((c for c in reversed(self.commits) if c.root == root.hex()), None)


class RaceJournal:
    """The journals in ``home``, one file per epoch."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def path(self, epoch: int) -> Path:
        return self.home / f"sprint-{epoch}.json"

    def load(self, epoch: int) -> EpochRace | None:
        """The epoch's race as last written; None when there is none (or it does not parse: logged)."""
        path = self.path(epoch)
        if not path.exists():
            return None
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            return EpochRace(
                epoch=data["epoch"],
                seed=data["seed"],
                pubkey=data["pubkey"],
                next_nonce=data["next_nonce"],
                proofs=[Proof(n, d) for n, d in data["proofs"]],
                commits=[Commit(**c) for c in data["commits"]],
            )
        except (ValueError, KeyError, TypeError) as error:
            logger.warning("race journal %s unreadable, ignored: %s", path, error)
            return None

    def save(self, race: EpochRace) -> None:
        path = self.path(race.epoch)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(".json.new")
        with scratch.open("w") as out:
            json.dump({**asdict(race), "proofs": [list(p) for p in race.proofs]}, out, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)
