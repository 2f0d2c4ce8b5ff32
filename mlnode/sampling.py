"""Token choice from logits, replayable by a verifier.

Randomness is counter-based: the uniform draw for output position i of a request with seed s is
SHA-256(s, i) as a 53-bit fraction. It does not depend on batching, threads or the order requests
arrive in, so a verifier holding the seed can replay every choice from its own logits.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from mlnode.tokenizer import EOT

GENERATABLE = torch.tensor(list(range(256)) + [EOT])
MAX_TEMPERATURE = 2.0
"""OpenAI's upper bound. Far above it (1e16) most tempered probabilities are exactly equal in float64,
every token sits in a run of near-ties spanning most of the vocabulary, and the verifier's token check
admits almost anything."""
GREEDY_BELOW = 1e-5
"""Temperatures below this are argmax, as in vLLM (``_SAMPLING_EPS``). There a draw could pick another
token only among logits within a few T of the best, a gap at the level of numerical noise; and the
arithmetic fails: a near-tie's probability underflows to 0 (below ~1e-8, so the verifier could not
excuse an honest near-tie) and logits / T overflows float64 (at 1e-320: NaN, an empty nucleus)."""
SEED_BOUND = 1 << 63
"""Seeds are signed 64-bit: the draw hashes them as such."""


@dataclass(frozen=True)
class SamplingParams:
    """How tokens are chosen. Only parameters a generator accepts can be built, so the verifier never
    replays a choice no generator could have made."""

    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= MAX_TEMPERATURE:
            raise ValueError(f"temperature must lie in [0, {MAX_TEMPERATURE:g}], not {self.temperature!r}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must lie in (0, 1], not {self.top_p!r}")
        if not -SEED_BOUND <= self.seed < SEED_BOUND:
            raise ValueError(f"seed must be a signed 64-bit integer, not {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_BELOW


def uniform(seed: int, index: int) -> float:
    digest = hashlib.sha256(struct.pack("<qQ", seed, index)).digest()
    return (int.from_bytes(digest[:8], "little") >> 11) / float(1 << 53)


@dataclass(frozen=True)
class Choice:
    token: int
    margin: float
    """How far the decision was from flipping: the logit gap to the runner-up when greedy, otherwise
    the distance of the draw to the nearest edge of the chosen token's probability interval."""


def allowed_logits(logits: Tensor, allowed: Tensor | None = GENERATABLE) -> Tensor:
    """Float64 logits with every token that may not be generated at -inf: for our vocabulary the specials
    other than EOT; ``allowed`` None allows every id."""
    if allowed is None:
        return logits.double()
    masked = torch.full_like(logits, -math.inf, dtype=torch.float64)
    masked[allowed] = logits[allowed].double()
    return masked


def nucleus(
    logits: Tensor, params: SamplingParams, allowed: Tensor | None = GENERATABLE
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and their probabilities (float64, renormalised) inside the top-p nucleus, sorted by
    probability descending and then by id."""
    probs = torch.softmax(allowed_logits(logits, allowed) / params.temperature, dim=-1).numpy()
    order = np.lexsort((np.arange(len(probs)), -probs))
    order = order[probs[order] > 0]
    sorted_probs = probs[order]
    if params.top_p < 1.0:
        keep = int(np.searchsorted(np.cumsum(sorted_probs), params.top_p, side="left")) + 1
        order, sorted_probs = order[:keep], sorted_probs[:keep]
    return order, sorted_probs / sorted_probs.sum()


def choose(logits: Tensor, params: SamplingParams, index: int, allowed: Tensor | None = GENERATABLE) -> Choice:
    """The token for output position ``index`` given that position's logits [vocab]."""
    if params.greedy:
        top = torch.topk(allowed_logits(logits, allowed), 2)
        return Choice(int(top.indices[0]), float(top.values[0] - top.values[1]))
    order, probs = nucleus(logits, params, allowed)
    draw = uniform(params.seed, index)
    edges = np.cumsum(probs)
    position = min(int(np.searchsorted(edges, draw, side="right")), len(order) - 1)
    low = edges[position - 1] if position else 0.0
    return Choice(int(order[position]), float(min(draw - low, edges[position] - draw)))


def log_softmax(logits: Tensor) -> Tensor:
    """Reported logprobs: the model's own distribution, before temperature and top-p (as vLLM reports)."""
    return torch.log_softmax(logits.float(), dim=-1)
