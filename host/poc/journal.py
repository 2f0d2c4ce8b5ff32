"""``VerdictJournal``: the verdicts this host reached and has not seen land, on disk (``H/poc-verdicts.json``), so
a restarted host sends them again without re-executing, and not before a transaction it sent may have landed.

One JSON object, ``{"verdicts": {id hex: {verdict, score, reason, sent_height, tx}}}``, rewritten whole (a new
file, fsynced, renamed over the old) when a verdict is reached, sent, or forgotten: it holds the inferences
awaiting this host's verdict, a handful, so each write is small. A verdict is forgotten once its inference no
longer awaits it on chain (landed, or its window closed)."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

logger = logging.getLogger("gonka.host.poc")


@dataclass
class Verdict:
    """A verdict reached: ``match``, its score in parts per million and why; ``sent_height`` (0: not sent yet)
    the last committed height when its last transaction went out, and that transaction's hash."""

    match: bool
    score: int
    reason: str
    sent_height: int = 0
    tx: str = ""


class VerdictJournal:
    """The journal at ``path``; not thread-safe (the duty's one thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.verdicts: dict[bytes, Verdict] = self._read()

    def _read(self) -> dict[bytes, Verdict]:
        try:
            data = json.loads(self.path.read_text())
            return {bytes.fromhex(key): Verdict(**value) for key, value in data["verdicts"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError) as error:
            logger.warning("verdict journal %s unreadable, ignored: %s", self.path, error)
            return {}

    def get(self, inference_id: bytes) -> Verdict | None:
        return self.verdicts.get(inference_id)

    def reached(self, inference_id: bytes, verdict: Verdict) -> None:
        self.verdicts[inference_id] = verdict
        self._save()

    def sent(self, inference_ids: list[bytes], height: int, tx: str) -> None:
        for inference_id in inference_ids:
            self.verdicts[inference_id].sent_height, self.verdicts[inference_id].tx = height, tx
        self._save()

    def keep_only(self, awaiting: set[bytes]) -> None:
        """Forget the verdicts whose inferences no longer await this host's verdict."""
        gone = [inference_id for inference_id in self.verdicts if inference_id not in awaiting]
        if gone:
            for inference_id in gone:
                del self.verdicts[inference_id]
            self._save()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_name(self.path.name + ".new")
        document = {"verdicts": {key.hex(): asdict(value) for key, value in self.verdicts.items()}}
        with scratch.open("w") as out:
            json.dump(document, out, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, self.path)
