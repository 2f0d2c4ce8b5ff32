"""What generation and serving need from a tokenizer: ours (bytes) or a Hugging Face model's.

Generation works on ids; a stop sequence and the answer's text work on the bytes each id stands for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from torch import Tensor

from mlnode import tokenizer
from mlnode.sampling import GENERATABLE


@dataclass(frozen=True)
class Vocabulary:
    chat_prompt: Callable[[Sequence[tuple[str, str]]], list[int]]
    """Token ids of (role, content) messages followed by the assistant's opening."""
    token_bytes: Callable[[int], list[int]]
    """The bytes a token stands for (OpenAI's ``bytes``); empty for a special token."""
    token_text: Callable[[int], str]
    end: frozenset[int]
    """Ids that end the answer (finish ``stop``)."""
    generatable: Tensor | None
    """The ids generation may choose; None for every id."""


BYTES = Vocabulary(
    chat_prompt=tokenizer.chat_prompt,
    token_bytes=tokenizer.token_bytes,
    token_text=tokenizer.token_text,
    end=frozenset({tokenizer.EOT}),
    generatable=GENERATABLE,
)
