"""The finish of one answer, as the executor proxy derives it from what its ML node sent.

What a finish says about an answer (``Digest``), the same for a stream and a whole answer:

- ``response_hash`` = sha256 of the UTF-8 of the answer's text: the choices in ascending ``index``, each one's
  ``message.content`` (a stream: its ``delta.content`` pieces in arrival order), concatenated; a null content
  is "";
- ``prompt_tokens``, ``completion_tokens`` from the answer's ``usage``. A stream whose request did not ask for
  usage is sent to the node with ``stream_options.include_usage`` on, and the usage is taken out of what the
  client gets (the usage-only last chunk dropped, ``usage`` removed from the others); a stream that still
  carries no usage counts one completion token per chunk with non-empty content, and 0 prompt tokens. A whole
  answer without usage is not finished;
- ``logprobs_digest`` = sha256 of the canonical JSON (sorted keys, no spaces, ASCII) of the list, one entry per
  choice in ascending ``index``, of that choice's token logprobs (``logprobs.content``; a stream: its chunks'
  ``logprobs.content`` lists concatenated; [] for a choice without) — or sha256(b"") when no choice has
  logprobs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sdk.client.signing import canonical_json
from x.inference.client import Finish

EMPTY_DIGEST = hashlib.sha256(b"").digest()


class Digest:
    """The finish of one answer, built from a whole answer (``answer``) or event by event (``event``)."""

    def __init__(self) -> None:
        self.text: dict[int, list[str]] = {}
        self.logprobs: dict[int, list[Any]] = {}
        self.has_logprobs = False
        self.usage: dict[str, Any] | None = None
        self.pieces = 0
        """Chunks with non-empty content: the completion count of a stream without usage."""

    def _choice(self, choice: dict[str, Any], part: str) -> None:
        index = choice.get("index", 0)
        content = (choice.get(part) or {}).get("content")
        if isinstance(content, str) and content:
            self.text.setdefault(index, []).append(content)
            self.pieces += 1
        else:
            self.text.setdefault(index, [])
        logprobs = choice.get("logprobs")
        entries = self.logprobs.setdefault(index, [])
        if isinstance(logprobs, dict):
            self.has_logprobs = True
            entries.extend(logprobs.get("content") or [])

    def answer(self, answer: dict[str, Any]) -> None:
        for choice in answer.get("choices") or []:
            self._choice(choice, "message")
        self.usage = answer.get("usage") or None

    def event(self, chunk: dict[str, Any]) -> None:
        for choice in chunk.get("choices") or []:
            self._choice(choice, "delta")
        if chunk.get("usage"):
            self.usage = chunk["usage"]

    def response_hash(self) -> bytes:
        text = "".join("".join(self.text[index]) for index in sorted(self.text))
        return hashlib.sha256(text.encode()).digest()

    def logprobs_digest(self) -> bytes:
        if not self.has_logprobs:
            return EMPTY_DIGEST
        return hashlib.sha256(canonical_json([self.logprobs[index] for index in sorted(self.logprobs)])).digest()

    def tokens(self, counted: bool) -> tuple[int, int] | None:
        """(prompt, completion) from the usage; when there is none, the counted pieces if ``counted``, else None."""
        if self.usage is not None:
            try:
                return int(self.usage["prompt_tokens"]), int(self.usage["completion_tokens"])
            except (KeyError, TypeError, ValueError):
                return None
        return (0, self.pieces) if counted else None

    def finish(self, inference_id: bytes, counted: bool) -> Finish | None:
        tokens = self.tokens(counted)
        if tokens is None or min(tokens) < 0:
            return None
        return Finish(inference_id, self.response_hash(), tokens[0], tokens[1], self.logprobs_digest())


def finish_of_answer(inference_id: bytes, answer: dict[str, Any]) -> Finish | None:
    """The finish of a whole (non-stream) answer; None when it has no usage."""
    digest = Digest()
    digest.answer(answer)
    return digest.finish(inference_id, counted=False)


def event_data(event: bytes) -> bytes | None:
    """The data of one server-sent event (its ``data:`` lines joined), None when it has none."""
    lines = [line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:")]
    return b"\n".join(lines) if lines else None
