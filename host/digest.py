"""The finish of one answer, as the executor proxy derives it from what its ML node sent, and the answer as the
host keeps it for PoC V2 (``KeptAnswer``: what a validator re-executes, and what the hashes are over).

The host asks its node for every answer's logprobs with their top ``TOP_LOGPROBS`` alternatives, whatever the
client asked (``host/terms.py``), and the client gets only the logprobs it asked for (``host/shown.py``): so the
kept answer, and the hashes, are the node's answer, which may carry more logprobs than the client got.

What a finish says about an answer (``Digest``), the same for a stream and a whole answer:

- ``response_hash`` = sha256 of the UTF-8 of the answer's text: the choices in ascending ``index``, each one's
  ``message.content`` (a stream: its ``delta.content`` pieces in arrival order), concatenated; a null content
  is "";
- ``prompt_tokens``, ``completion_tokens`` from the answer's ``usage``. A stream whose request did not ask for
  usage is sent to the node with ``stream_options.include_usage`` on, and the usage is taken out of what the
  client gets (the usage-only last chunk dropped, ``usage`` removed from the others); a stream that still
  carries no usage counts one completion token per chunk with non-empty content, and 0 prompt tokens. A whole
  answer without usage is not finished;
- ``logprobs_digest`` = sha256 of the canonical JSON (sorted keys, no spaces, ASCII; Python's float repr) of the
  list, one entry per choice in ascending ``index``, of that choice's token logprobs as the node sent them
  (``logprobs.content``; a stream: its chunks' ``logprobs.content`` lists concatenated; [] for a choice without)
  — or sha256(b"") when no choice has logprobs (a node that does not return them).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict

from sdk.client.signing import canonical_json
from x.inference.client import Finish

EMPTY_DIGEST = hashlib.sha256(b"").digest()


class KeptChoice(BaseModel):
    """One choice of an answer as kept: its text, its token logprobs as the node sent them (``logprobs.content``
    entries, JSON values as they came; None when the node sent none for it) and its finish reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    content: str
    logprobs: list[Any] | None
    finish_reason: str | None


class KeptAnswer(BaseModel):
    """An answer as the host keeps it for re-execution: its choices in ascending ``index`` and its usage. The
    finish's hashes are functions of it alone, so a validator holding it checks them against the chain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    choices: list[KeptChoice]
    usage: dict[str, Any] | None

    def response_hash(self) -> bytes:
        return hashlib.sha256("".join(choice.content for choice in self.choices).encode()).digest()

    def logprobs_digest(self) -> bytes:
        if all(choice.logprobs is None for choice in self.choices):
            return EMPTY_DIGEST
        return hashlib.sha256(canonical_json([choice.logprobs or [] for choice in self.choices])).digest()


class Digest:
    """The finish of one answer, built from a whole answer (``answer``) or event by event (``event``)."""

    def __init__(self) -> None:
        self.text: dict[int, list[str]] = {}
        self.logprobs: dict[int, list[Any] | None] = {}
        self.finish_reasons: dict[int, str] = {}
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
        if isinstance(logprobs, dict):
            entries = self.logprobs.get(index)
            if entries is None:
                entries = self.logprobs[index] = []
            entries.extend(logprobs.get("content") or [])
        else:
            self.logprobs.setdefault(index, None)
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            self.finish_reasons[index] = reason

    def answer(self, answer: dict[str, Any]) -> None:
        for choice in answer.get("choices") or []:
            self._choice(choice, "message")
        self.usage = answer.get("usage") or None

    def event(self, chunk: dict[str, Any]) -> None:
        for choice in chunk.get("choices") or []:
            self._choice(choice, "delta")
        if chunk.get("usage"):
            self.usage = chunk["usage"]

    def kept(self) -> KeptAnswer:
        """The answer as read so far, as the host keeps it."""
        return KeptAnswer(
            choices=[
                KeptChoice(
                    index=index,
                    content="".join(self.text[index]),
                    logprobs=self.logprobs[index],
                    finish_reason=self.finish_reasons.get(index),
                )
                for index in sorted(self.text)
            ],
            usage=self.usage,
        )

    def response_hash(self) -> bytes:
        return self.kept().response_hash()

    def logprobs_digest(self) -> bytes:
        return self.kept().logprobs_digest()

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
        kept = self.kept()
        return Finish(inference_id, kept.response_hash(), tokens[0], tokens[1], kept.logprobs_digest())


def finish_of_answer(inference_id: bytes, answer: dict[str, Any]) -> Finish | None:
    """The finish of a whole (non-stream) answer; None when it has no usage."""
    digest = Digest()
    digest.answer(answer)
    return digest.finish(inference_id, counted=False)


def event_data(event: bytes) -> bytes | None:
    """The data of one server-sent event (its ``data:`` lines joined), None when it has none."""
    lines = [line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:")]
    return b"\n".join(lines) if lines else None
