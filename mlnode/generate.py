"""Autoregressive generation: the per-sequence state machine and a one-request loop.

``Sequence`` turns one position's logits into the next token, its logprobs and, when it ends, a finish
reason. The batching engine and the single-request ``generate`` drive the same ``Sequence``, so a
request gets the same tokens whichever path ran it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

import torch
from torch import Tensor

from mlnode.model import KVCache, Transformer
from mlnode.sampling import SamplingParams, choose, log_softmax
from mlnode.vocabulary import BYTES, Vocabulary

MAX_TOP_LOGPROBS = 5


@dataclass(frozen=True)
class TokenChoice:
    token: int
    logprob: float
    top: tuple[tuple[int, float], ...]
    """The ``top_logprobs`` most likely tokens at this position, most likely first."""


@dataclass(frozen=True)
class GenerationRequest:
    prompt: list[int]
    max_tokens: int
    sampling: SamplingParams = SamplingParams()
    stop: tuple[bytes, ...] = ()
    top_logprobs: int = 0
    vocabulary: Vocabulary = BYTES


@dataclass
class Sequence:
    request: GenerationRequest
    tokens: list[int] = field(default_factory=list)
    logprobs: list[TokenChoice] = field(default_factory=list)
    finish_reason: str | None = None
    emitted: int = 0
    """How many tokens have been handed to the client (a stop sequence may hold some back)."""

    @property
    def position(self) -> int:
        """Position of the newest token in the model's context."""
        return len(self.request.prompt) + len(self.tokens) - 1

    def advance(self, logits: Tensor) -> None:
        """Choose the next token from this position's logits and record it, or finish. Choices are made
        on the CPU in float64 whatever device computed the logits."""
        logits = logits.detach().float().cpu()
        vocabulary = self.request.vocabulary
        choice = choose(logits, self.request.sampling, len(self.tokens), vocabulary.generatable)
        if choice.token in vocabulary.end:
            self.finish_reason = "stop"
            return
        logprobs = log_softmax(logits)
        top: tuple[tuple[int, float], ...] = ()
        if self.request.top_logprobs:
            values, ids = torch.topk(logprobs, self.request.top_logprobs)
            top = tuple((int(i), float(v)) for i, v in zip(ids, values))
        self.tokens.append(choice.token)
        self.logprobs.append(TokenChoice(choice.token, float(logprobs[choice.token]), top))
        self._apply_stop()
        if self.finish_reason is None and len(self.tokens) >= self.request.max_tokens:
            self.finish_reason = "length"

    def _apply_stop(self) -> None:
        """End at the first stop sequence; the sequence itself is not part of the answer. With multi-byte
        tokens the answer ends before the token in which the stop sequence starts."""
        if not self.request.stop:
            return
        ends = self._byte_ends()
        text = b"".join(bytes(self.request.vocabulary.token_bytes(t)) for t in self.tokens)
        cut = min((i for i in (text.find(s) for s in self.request.stop) if i >= 0), default=-1)
        if cut >= 0:
            keep = bisect_right(ends, cut)
            del self.tokens[keep:], self.logprobs[keep:]
            self.finish_reason = "stop"

    def releasable(self) -> int:
        """Tokens safe to stream now: those that cannot turn out to start a stop sequence."""
        if self.finish_reason is not None or not self.request.stop:
            return len(self.tokens)
        hold = max(len(s) for s in self.request.stop) - 1
        ends = self._byte_ends()
        return max(self.emitted, bisect_right(ends, (ends[-1] if ends else 0) - hold))

    def _byte_ends(self) -> list[int]:
        """Where each token's bytes end in the answer's bytes."""
        return list(accumulate(len(self.request.vocabulary.token_bytes(t)) for t in self.tokens))


def generate(model: Transformer, request: GenerationRequest) -> Sequence:
    """Run one request to completion with a one-slot KV cache."""
    config = model.config
    if len(request.prompt) + request.max_tokens > config.max_seq_len:
        raise ValueError(
            f"prompt ({len(request.prompt)}) + max_tokens ({request.max_tokens}) exceeds the "
            f"context of {config.max_seq_len} tokens"
        )
    sequence = Sequence(request)
    cache = KVCache.empty(config, 1, dtype=model.output.weight.dtype, device=model.output.weight.device)
    with torch.inference_mode():
        prompt = torch.tensor(request.prompt, device=cache.keys[0].device)
        sequence.advance(model.prefill(prompt, cache, 0))
        while sequence.finish_reason is None:
            token = torch.tensor([sequence.tokens[-1]], device=prompt.device)
            position = torch.tensor([sequence.position], device=prompt.device)
            sequence.advance(model.decode(token, position, cache)[0])
    return sequence
