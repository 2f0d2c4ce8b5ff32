"""``PayloadStore``: the payloads of the answers this host served, on disk in its home (``H/poc-payloads.sqlite``),
kept ``retention_s`` for the validator the chain may draw for each (host/README.md, "PoC V2 duties").

One row per inference: the bytes its requester signed (sha256: the chain's ``body_hash``), the node's answer as
kept (``host.digest.KeptAnswer``, as JSON text written by Python's ``json``, so every float, and an infinite
logprob, reads back as it was) and when it was kept (wall clock). Pruned by age: every ``prune_interval_s`` a
``put`` also deletes the rows older than ``retention_s``. SQLite in WAL mode with ``synchronous=NORMAL``: a put
is a write to the OS, not a disk flush, so it costs the proxy's event loop well under a millisecond; a power
loss may lose the last few payloads (their validations then fail, as a host that did not keep them)."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from host.digest import KeptAnswer

logger = logging.getLogger("gonka.host.poc")
SCHEMA = """
CREATE TABLE IF NOT EXISTS payloads (
    inference_id BLOB PRIMARY KEY,
    kept_at REAL NOT NULL,
    body BLOB NOT NULL,
    answer TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payloads_by_age ON payloads (kept_at);
"""


class PayloadStore:
    """The payloads at ``path``; thread-safe (the proxy keeps on its event loop, the route reads on a thread)."""

    def __init__(
        self, path: Path, retention_s: float, prune_interval_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        self.retention_s, self.prune_interval_s, self.clock = retention_s, prune_interval_s, clock
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()
        self.pruned_at = float("-inf")

    def put(self, inference_id: bytes, body: bytes, answer: KeptAnswer) -> None:
        now = self.clock()
        text = json.dumps(answer.model_dump(), separators=(",", ":"))
        with self.lock:
            self.db.execute(
                "INSERT OR REPLACE INTO payloads (inference_id, kept_at, body, answer) VALUES (?, ?, ?, ?)",
                (inference_id, now, body, text),
            )
            if now - self.pruned_at >= self.prune_interval_s:
                self.pruned_at = now
                self._prune(now)

    def get(self, inference_id: bytes) -> tuple[bytes, KeptAnswer] | None:
        """(body, answer) of ``inference_id``; None when none is kept (never, or pruned)."""
        with self.lock:
            row = self.db.execute(
                "SELECT body, answer FROM payloads WHERE inference_id = ?", (inference_id,)
            ).fetchone()
        if row is None:
            return None
        return bytes(row[0]), KeptAnswer.model_validate(json.loads(row[1]))

    def _prune(self, now: float) -> None:
        deleted = self.db.execute("DELETE FROM payloads WHERE kept_at < ?", (now - self.retention_s,)).rowcount
        if deleted:
            logger.info("%d payload(s) older than %.0f s deleted", deleted, self.retention_s)

    def close(self) -> None:
        with self.lock:
            self.db.close()
