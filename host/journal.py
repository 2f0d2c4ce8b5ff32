"""``FinishJournal``: the executing host's pending finishes on disk, so that what its ML node served and the
chain has not paid yet outlives an executor restart.

One JSON object a line, appended as things happen: ``{"finish": {inference_id, response_hash, prompt_tokens,
completion_tokens, logprobs_digest}}`` (bytes in hex) when a finish is queued, ``{"settled": "<id hex>"}`` when it
ended for good (committed, or dropped: expired, refused by x/inference, finished by another executor, …).
Opening the journal reads it back: the finishes with no later ``settled`` line are the pending ones, in the order
they were queued; a line that does not parse (the torn last line of a write a crash cut short) is left out. The
file is then rewritten with the pending ones alone (a new file, fsynced, renamed over the old), and again whenever
it holds more than ``2 × pending + compact_lines`` lines, so it stays about as small as what is pending.

Each line is flushed to the OS when written, so it survives the process being killed; lines are not fsynced one
by one (that would cost the executor a disk flush per answer), so a power loss may lose the last few: those
inferences then expire on chain and are refunded, as without a journal.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, BinaryIO

from x.inference.client import Finish

logger = logging.getLogger("gonka.host")


def _encode(finish: Finish) -> dict[str, Any]:
    return {
        "inference_id": finish.inference_id.hex(),
        "response_hash": finish.response_hash.hex(),
        "prompt_tokens": finish.prompt_tokens,
        "completion_tokens": finish.completion_tokens,
        "logprobs_digest": finish.logprobs_digest.hex(),
    }


def _decode(record: dict[str, Any]) -> Finish:
    return Finish(
        bytes.fromhex(record["inference_id"]),
        bytes.fromhex(record["response_hash"]),
        int(record["prompt_tokens"]),
        int(record["completion_tokens"]),
        bytes.fromhex(record["logprobs_digest"]),
    )


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


class FinishJournal:
    """The journal at ``path`` (created when missing). ``pending`` holds what is not settled, by id; ``queued``
    and ``settled`` record a change. Not thread-safe: the ``Finisher`` calls it under its own lock, which also
    keeps a finish's ``queued`` line before its ``settled`` line."""

    def __init__(self, path: Path, compact_lines: int = 1024) -> None:
        self.path = path
        self.compact_lines = compact_lines
        self.pending: dict[bytes, Finish] = self._read()
        self.lines = 0
        """Lines in the file now: what compaction weighs against ``pending``."""
        self._file = self._rewrite()

    def _read(self) -> dict[bytes, Finish]:
        pending: dict[bytes, Finish] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return pending
        skipped = 0
        for line in data.split(b"\n"):
            if not line:
                continue
            try:
                record = json.loads(line)
                if "settled" in record:
                    pending.pop(bytes.fromhex(record["settled"]), None)
                else:
                    finish = _decode(record["finish"])
                    pending[finish.inference_id] = finish
            except (ValueError, TypeError, KeyError):
                skipped += 1
        if skipped:
            logger.warning(
                "finish journal %s: %d line(s) that do not parse left out (a write cut short)", self.path, skipped
            )
        return pending

    def _rewrite(self) -> BinaryIO:
        """Write the pending finishes alone to a new file, make it durable, put it in the journal's place, and
        return the journal opened for appending."""
        fresh = self.path.with_name(self.path.name + ".new")
        with open(fresh, "wb") as out:
            out.writelines(_line({"finish": _encode(finish)}) for finish in self.pending.values())
            out.flush()
            os.fsync(out.fileno())
        os.replace(fresh, self.path)
        self.lines = len(self.pending)
        return open(self.path, "ab")

    def _append(self, record: dict[str, Any]) -> None:
        try:
            self._file.write(_line(record))
            self._file.flush()
        except OSError as error:  # a full disk: the finisher goes on from memory
            logger.warning("finish journal %s: a line could not be written: %r", self.path, error)
        self.lines += 1

    def queued(self, finish: Finish) -> None:
        self.pending[finish.inference_id] = finish
        self._append({"finish": _encode(finish)})

    def settled(self, inference_id: bytes) -> None:
        if self.pending.pop(inference_id, None) is None:
            return
        self._append({"settled": inference_id.hex()})
        if self.lines > 2 * len(self.pending) + self.compact_lines:
            self._file.close()
            self._file = self._rewrite()

    def close(self) -> None:
        self._file.close()
