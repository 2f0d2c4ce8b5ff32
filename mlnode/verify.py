"""Verification by re-execution: did this model, with these sampling parameters, produce this answer?

The verifier teacher-forces prompt + answer through its own copy of the model in one causal pass and
re-checks every decision the executor claims, position by position:

- token: ``sampling.choose`` is counter-based, so the verifier replays output position i from its own
  logits and the draw SHA-256(seed, i). The claimed token must be the one the replay picks, or one it
  would pick after every logprob moved by at most the logprob tolerance (a near-tie: greedy logits
  within 2·tol of the best; or, when sampling, a draw inside the token's interval with the odds of its
  edges moved by e^(2·tol/T), counting the order swaps of near-equal probabilities and a top-p cut that
  could move).
- logprobs: the claimed logprob of the token and of every ``top`` entry must equal the verifier's
  ``log_softmax`` within the tolerance, and the claimed top-k must be the verifier's top-k, up to
  tokens within 2·tol of the k-th value.

The score is the share of positions passing both. The verdict is a match iff every token is one the
replay admits, the score reaches ``min_score`` (which excuses only stray logprobs) and the answer's
structure is one the generator could have produced: no longer than
max_tokens; "length" only at exactly max_tokens; no stop sequence inside; "stop" only where the
replay ends the answer there, by choosing EOT, or by choosing, token by token, one of the stop
sequences starting right after the answer (the generator cuts it from the output). Those stop
sequences ride along in the same pass, so the model still runs once. Tolerances are measured and
explained in ``mlnode/VERIFY.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import torch
from torch import Tensor

from mlnode.config import ModelConfig
from mlnode.generate import Sequence, TokenChoice
from mlnode.model import Transformer
from mlnode.sampling import SamplingParams, allowed_logits, log_softmax, uniform
from mlnode.tokenizer import EOT

LOGPROB_TOL = 1e-5
"""Honest executors differ from the verifier by ≤ 1.9e-6 (KV-cache decode, batched decode, 1 vs 2 threads,
against one pass); 1e-3 relative noise on one block of the tiny model moves every position's top logprobs
by ≥ 6.6e-5."""
MIN_SCORE = 0.95
"""Every honest answer measured scores 1.0; this leaves room for a rare logprob outlier on other hardware.
It excuses no token: one the replay does not admit makes a mismatch whatever the score."""


class Reason(StrEnum):
    TOKEN = "token_mismatch"
    """Some position holds a token the replayed sampler would not choose: never a match."""
    LOGPROB = "logprob_mismatch"
    """Some position's claimed logprob of its token is off by more than the tolerance."""
    TOP_LOGPROBS = "top_logprobs_mismatch"
    """Some position's top-k set, or a value in it, differs from the verifier's."""
    LOW_SCORE = "low_score"
    TOO_LONG = "too_long"
    LENGTH_NOT_REACHED = "length_not_reached"
    """finish_reason "length" with fewer than max_tokens tokens: a truncated answer."""
    NOT_STOPPED = "not_stopped"
    """finish_reason "stop" where the replay neither chooses EOT nor a stop sequence next."""
    STOP_INSIDE = "stop_inside"
    """The answer contains a stop sequence, where the generator would have ended it."""
    SPECIAL_TOKEN = "special_token"
    """The answer contains a token the generator never emits (EOT, a role tag)."""
    FINISH_REASON = "unknown_finish_reason"


@dataclass(frozen=True)
class Tolerances:
    logprob: float = LOGPROB_TOL
    min_score: float = MIN_SCORE


class Executed(Protocol):
    """What an executor reports per output token; ``generate.Sequence`` is one."""

    @property
    def tokens(self) -> Seq[int]: ...

    @property
    def logprobs(self) -> Seq[TokenChoice]: ...


@dataclass(frozen=True)
class Answer:
    """An executor's answer as received from the wire."""

    tokens: list[int]
    logprobs: list[TokenChoice]


@dataclass(frozen=True)
class InferenceVerdict:
    match: bool
    score: float
    """Share of scored positions whose token and logprobs pass (1.0 for an empty answer)."""
    token_agreement: float
    """Share of positions whose token is exactly the replayed choice (near-ties not excused)."""
    max_logprob_error: float
    mean_logprob_error: float
    """Over every claimed value: each position's token logprob and its top-k logprobs."""
    reasons: tuple[Reason, ...]
    """Everything found wrong; logprob-level reasons may appear on a match whose score is high enough."""
    failed_positions: tuple[int, ...]


@dataclass(frozen=True)
class _Positions:
    """Per answer position (bool tensors [n]), and the absolute errors of every claimed logprob."""

    agreed: Tensor
    token_ok: Tensor
    logprob_ok: Tensor
    top_ok: Tensor
    errors: Tensor

    @property
    def passed(self) -> Tensor:
        return self.token_ok & self.logprob_ok & self.top_ok

    def reasons(self) -> list[Reason]:
        return [
            reason
            for reason, ok in (
                (Reason.TOKEN, self.token_ok),
                (Reason.LOGPROB, self.logprob_ok),
                (Reason.TOP_LOGPROBS, self.top_ok),
            )
            if not bool(ok.all())
        ]


def verify(
    model: Transformer,
    prompt: list[int],
    executed: Executed,
    sampling: SamplingParams,
    max_tokens: int,
    stop: tuple[bytes, ...],
    finish_reason: str,
    tolerances: Tolerances = Tolerances(),
) -> InferenceVerdict:
    """Re-execute one answer and judge it; raises ValueError only for input no generator could be asked for."""
    tokens, claims = list(executed.tokens), list(executed.logprobs)
    _validate(model.config, prompt, tokens, claims, max_tokens, stop)
    structural = _structure(tokens, max_tokens, stop, finish_reason)
    scored = tokens[:max_tokens]
    stoppable = finish_reason == "stop" and Reason.SPECIAL_TOKEN not in structural
    candidates = [s for s in dict.fromkeys(stop) if len(scored) + len(s) <= max_tokens] if stoppable else []
    extensions = _extensions(candidates)
    logits = _logits(model, [prompt + scored + list(extension) for extension in extensions])
    join = len(prompt) + len(scored) - 1
    checks = _check_positions(logits[0, len(prompt) - 1 : join], claims[:max_tokens], sampling, tolerances.logprob)
    if stoppable and not _ends_here(
        logits, extensions, join, scored, max_tokens, stop, candidates, sampling, tolerances.logprob
    ):
        structural.append(Reason.NOT_STOPPED)
    score = float(checks.passed.double().mean()) if scored else 1.0
    low = [Reason.LOW_SCORE] if score < tolerances.min_score else []
    errors = checks.errors
    return InferenceVerdict(
        match=not structural and not low and bool(checks.token_ok.all()),
        score=score,
        token_agreement=float(checks.agreed.double().mean()) if scored else 1.0,
        max_logprob_error=float(errors.max()) if errors.numel() else 0.0,
        mean_logprob_error=float(errors.mean()) if errors.numel() else 0.0,
        reasons=tuple(structural + checks.reasons() + low),
        failed_positions=tuple(int(i) for i in torch.nonzero(~checks.passed).flatten()),
    )


def verify_sequence(model: Transformer, sequence: Sequence, tolerances: Tolerances = Tolerances()) -> InferenceVerdict:
    """Verify a ``Sequence`` against the request it carries (its finish reason must be set)."""
    request = sequence.request
    return verify(
        model,
        request.prompt,
        sequence,
        request.sampling,
        request.max_tokens,
        request.stop,
        str(sequence.finish_reason),
        tolerances,
    )


def teacher_forced(model: Transformer, prompt: list[int], tokens: list[int]) -> Tensor:
    """Logprobs [len(tokens), vocab] the model gives each of ``tokens`` after the prompt and those before it."""
    return log_softmax(_logits(model, [prompt + tokens])[0, len(prompt) - 1 : len(prompt) + len(tokens) - 1])


def _validate(
    config: ModelConfig,
    prompt: list[int],
    tokens: list[int],
    claims: list[TokenChoice],
    max_tokens: int,
    stop: tuple[bytes, ...],
) -> None:
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    if not prompt:
        raise ValueError("the prompt is empty")
    if len(prompt) + max_tokens > config.max_seq_len:
        raise ValueError(
            f"prompt ({len(prompt)}) + max_tokens ({max_tokens}) exceeds the context of {config.max_seq_len} tokens"
        )
    if len(claims) != len(tokens) or any(claim.token != token for claim, token in zip(claims, tokens)):
        raise ValueError("the logprobs do not name the answer's tokens one for one")
    ids = [*prompt, *tokens, *(token for claim in claims for token, _ in claim.top)]
    if any(not 0 <= token < config.vocab_size for token in ids):
        raise ValueError(f"token ids must lie in [0, {config.vocab_size})")
    if any(not s for s in stop):
        raise ValueError("a stop sequence is empty")


def _stop_at(tokens: list[int], stop: Iterable[bytes]) -> int:
    """Where the generator cuts these byte tokens: the start of the earliest stop sequence, or -1."""
    text = bytes(tokens)
    return min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)


def _structure(tokens: list[int], max_tokens: int, stop: tuple[bytes, ...], finish_reason: str) -> list[Reason]:
    """What is wrong with the answer's shape, before any model output is looked at."""
    reasons: list[Reason] = []
    if len(tokens) > max_tokens:
        reasons.append(Reason.TOO_LONG)
    if any(token >= 256 for token in tokens):
        reasons.append(Reason.SPECIAL_TOKEN)
    elif stop and _stop_at(tokens, stop) >= 0:
        reasons.append(Reason.STOP_INSIDE)
    if finish_reason == "length" and len(tokens) < max_tokens:
        reasons.append(Reason.LENGTH_NOT_REACHED)
    if finish_reason not in ("stop", "length"):
        reasons.append(Reason.FINISH_REASON)
    return reasons


def _extensions(stops: list[bytes]) -> list[bytes]:
    """Continuations to teacher-force after the answer: every stop sequence but its last byte (which is
    only chosen, never fed back), dropping those that are a prefix of another. The first is used for the
    answer's own positions; it is empty when there are no stop sequences to check."""
    heads = sorted({b""} | {s[:-1] for s in stops}, key=len, reverse=True)
    return [head for i, head in enumerate(heads) if not any(longer.startswith(head) for longer in heads[:i])]


def _logits(model: Transformer, rows: list[list[int]]) -> Tensor:
    """Logits [rows, longest, vocab] (float32, CPU) of one causal pass over rows padded on the right;
    padding never reaches an earlier position."""
    width = max(len(row) for row in rows)
    device = model.output.weight.device
    batch = torch.tensor([row + [EOT] * (width - len(row)) for row in rows], device=device)
    with torch.inference_mode():
        return model(batch).float().cpu()


def _ends_here(
    logits: Tensor,
    extensions: list[bytes],
    join: int,
    tokens: list[int],
    max_tokens: int,
    stop: tuple[bytes, ...],
    candidates: list[bytes],
    sampling: SamplingParams,
    tol: float,
) -> bool:
    """Whether the generator, replayed, finishes "stop" right after ``tokens``: it chooses EOT next, or
    chooses a stop sequence token by token and only there first finds a stop sequence."""
    count = len(tokens)
    eot = torch.tensor([EOT])
    if count < max_tokens and bool(admissible(logits[0, join : join + 1], eot, [count], sampling, tol)[0]):
        return True
    for candidate in candidates:
        cuts = [_stop_at(tokens + list(candidate[:end]), stop) for end in range(1, len(candidate) + 1)]
        if cuts[-1] != count or any(cut >= 0 for cut in cuts[:-1]):
            continue
        row = next(i for i, extension in enumerate(extensions) if extension.startswith(candidate[:-1]))
        chosen = admissible(
            logits[row, join : join + len(candidate)],
            torch.tensor(list(candidate)),
            range(count, count + len(candidate)),
            sampling,
            tol,
        )
        if bool(chosen.all()):
            return True
    return False


def admissible(
    logits: Tensor, tokens: Tensor, indices: Iterable[int], sampling: SamplingParams, slack: float
) -> Tensor:
    """Per row, whether ``choose`` picks that row's token from those logits, or could after every logprob
    moved by at most ``slack``. With slack 0 this is exactly ``choose``'s decision."""
    allowed = allowed_logits(logits.T).T  # allowed_logits masks along its first axis
    mine = allowed.gather(1, tokens[:, None])[:, 0]
    if sampling.greedy:
        return torch.isfinite(mine) & (allowed.max(dim=1).values - mine <= 2 * slack)
    eta = 2 * slack / sampling.temperature
    # the odds between any two probabilities, and so the odds of any cumulative edge, move by ≤ e^eta
    probs, order = torch.sort(torch.softmax(allowed / sampling.temperature, dim=1), dim=1, descending=True, stable=True)
    edges = probs.cumsum(dim=1)
    positive = (probs > 0).sum(dim=1)
    keep_low, keep_high = positive, positive
    if sampling.top_p < 1.0:
        top_p = torch.full_like(edges[:, :1], sampling.top_p)
        keep_low = torch.minimum(torch.searchsorted(edges, _moved(top_p, -eta))[:, 0] + 1, positive)
        keep_high = torch.minimum(torch.searchsorted(edges, _moved(top_p, eta))[:, 0] + 1, positive)
    rank = (order == tokens[:, None]).int().argmax(dim=1)
    logp = probs.log()
    # runs of near-equal probabilities, whose order the executor may have seen swapped
    breaks = ~(logp[:, :-1] - logp[:, 1:] < eta)
    groups = torch.cat([torch.zeros_like(rank[:, None]), breaks.long().cumsum(dim=1)], dim=1)
    same = groups == groups.gather(1, rank[:, None])
    first = same.int().argmax(dim=1)
    last = same.shape[1] - 1 - same.flip(1).int().argmax(dim=1)
    rows = torch.arange(len(tokens))
    below = torch.where(first > 0, edges[rows, (first - 1).clamp(min=0)], torch.zeros_like(mine))
    smallest = torch.maximum(keep_low, first + 1)
    low = _moved(below / edges[rows, keep_high - 1], -eta)
    high = _moved(torch.minimum(edges[rows, last], edges[rows, smallest - 1]) / edges[rows, smallest - 1], eta)
    draws = torch.tensor([uniform(sampling.seed, index) for index in indices], dtype=torch.float64)
    return (probs[rows, rank] > 0) & (first < keep_high) & (low <= draws) & (draws <= high)


def _moved(edge: Tensor, eta: float) -> Tensor:
    """A cumulative probability with its odds scaled by e^eta: the furthest it can move."""
    return torch.sigmoid(torch.logit(edge) + eta)


def _check_positions(logits: Tensor, claims: list[TokenChoice], sampling: SamplingParams, tol: float) -> _Positions:
    """Token and logprob checks of every answer position at once; ``logits`` [n, vocab] predict the n claims."""
    tokens = torch.tensor([claim.token for claim in claims], dtype=torch.long)
    indices = range(len(claims))
    logprobs = log_softmax(logits)
    claimed = torch.tensor([claim.logprob for claim in claims], dtype=torch.float64)
    token_error = torch.nan_to_num((logprobs.gather(1, tokens[:, None])[:, 0].double() - claimed).abs(), nan=math.inf)
    top_ok, top_errors = _check_top(logprobs, claims, tol)
    return _Positions(
        agreed=admissible(logits, tokens, indices, sampling, 0.0),
        token_ok=admissible(logits, tokens, indices, sampling, tol),
        logprob_ok=token_error <= tol,
        top_ok=top_ok,
        errors=torch.cat([token_error, top_errors]),
    )


def _check_top(logprobs: Tensor, claims: list[TokenChoice], tol: float) -> tuple[Tensor, Tensor]:
    """Per position, whether the claimed top-k (k = the longest list claimed) holds distinct tokens, each
    with its value within ``tol``, and is the verifier's top-k up to near-ties at the k-th value; and the
    absolute errors of every claimed value."""
    k = max((len(claim.top) for claim in claims), default=0)
    if k == 0:
        return torch.ones(len(claims), dtype=torch.bool), torch.zeros(0, dtype=torch.float64)
    present = torch.tensor([[j < len(claim.top) for j in range(k)] for claim in claims], dtype=torch.bool)
    padded = [list(claim.top) + [(0, 0.0)] * (k - len(claim.top)) for claim in claims]
    ids = torch.tensor([[token for token, _ in top] for top in padded], dtype=torch.long)
    values = torch.tensor([[value for _, value in top] for top in padded], dtype=torch.float64)
    mine = logprobs.gather(1, ids).double()
    errors = torch.nan_to_num((mine - values).abs(), nan=math.inf)
    kth = torch.topk(logprobs, k, dim=1).values[:, -1:].double()
    above = kth + 2 * tol
    complete = (mine > above).sum(dim=1) == (logprobs.double() > above).sum(dim=1)
    inside = (mine >= kth - 2 * tol).all(dim=1)
    sorted_ids = ids.sort(dim=1).values
    distinct = (sorted_ids[:, 1:] != sorted_ids[:, :-1]).all(dim=1)
    ok = present.all(dim=1) & distinct & complete & inside & ((errors <= tol) | ~present).all(dim=1)
    return ok, errors[present]
