"""What of its node's answer the client gets. The host asks its node for more than a client may ask for: a
stream's usage (the finish needs it) and every token's logprobs with ``TOP_LOGPROBS`` alternatives (PoC V2
re-executes against them; ``host/terms.py``). It takes the extra out again, so the client gets the answer it
asked for, while the host finishes and keeps the node's whole answer (``host/digest.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from host.terms import asked_top_logprobs
from x.inference.client import ChatTerms


@dataclass(frozen=True)
class Shown:
    """What the client asked to see of its answer."""

    usage: bool
    """A stream's usage (``stream_options.include_usage``); a whole answer always carries its usage."""
    logprobs: int | None
    """The top alternatives per token it asked for (0: the tokens' logprobs alone); None: no logprobs."""

    @classmethod
    def of(cls, request: dict[str, Any], terms: ChatTerms) -> Shown:
        return cls(terms.include_usage, asked_top_logprobs(request))

    def choice(self, choice: dict[str, Any]) -> bool:
        """Cut ``choice``'s logprobs to what the client asked, with new values (the entries a ``Digest`` holds
        are never changed); whether anything was cut."""
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            return False
        if self.logprobs is None:
            choice["logprobs"] = None  # what the node answers a request without logprobs
            return True
        content = logprobs.get("content")
        if not isinstance(content, list):
            return False
        top = self.logprobs
        cut = [
            {**entry, "top_logprobs": entry["top_logprobs"][:top]}
            if isinstance(entry, dict) and isinstance(entry.get("top_logprobs"), list)
            and len(entry["top_logprobs"]) > top
            else entry
            for entry in content
        ]  # fmt: skip
        if all(new is old for new, old in zip(cut, content, strict=True)):
            return False
        choice["logprobs"] = {**logprobs, "content": cut}
        return True

    def answer(self, answer: dict[str, Any], data: bytes) -> bytes:
        """A whole answer (``data``, parsed: ``answer``, which is cut in place) as the client gets it: the node's
        bytes unchanged, unless logprobs were cut (then the answer re-serialised compactly)."""
        choices = answer.get("choices")
        if not isinstance(choices, list):
            return data
        if not any([self.choice(choice) for choice in choices if isinstance(choice, dict)]):
            return data
        return json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()

    def chunk(self, chunk: dict[str, Any]) -> bool | None:
        """Take out of a stream's ``chunk`` what the client did not ask for: None when the whole chunk goes (the
        usage-only last chunk), else whether it changed."""
        choices = chunk.get("choices")
        if not self.usage and "usage" in chunk:
            if not choices:
                return None
            del chunk["usage"]
            changed = True
        else:
            changed = False
        if isinstance(choices, list):
            changed = any([self.choice(choice) for choice in choices if isinstance(choice, dict)]) or changed
        return changed
