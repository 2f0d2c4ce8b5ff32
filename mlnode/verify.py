"""Verification by re-execution: did this model, with these sampling parameters, produce this answer?

The verifier teacher-forces prompt + answer through its own copy of the model in one causal pass and
re-checks every decision the executor claims, position by position:

- token: ``sampling.choose`` is counter-based, so the verifier replays output position i from its own
  logits and the draw SHA-256(seed, i). The claimed token must be the one the replay picks, or one it
  would pick after every logprob moved by at most the slack (a near-tie: greedy logits
  within 2·slack of the best; or, when sampling, a draw inside the token's interval with the odds of its
  edges moved by e^(2·slack/T), counting the order swaps of near-equal probabilities and a top-p cut that
  could move).
- logprobs: per position, a distance d between the claimed top-k logprobs (and the token's own) and the
  verifier's: the largest gap over the claimed entries, the claimed token, and the verifier's own top-k
  entries the claim left out (such an entry may be anything up to the claimed k-th value, so it costs
  only how far it lies above that). The position scores max(0, 1 − d/scale).

The score is the mean position score, in [0, 1]. The verdict is a match iff every token is one the
replay admits (near-ties within the slack excused), the top-k lists are well formed (k distinct tokens at
every position), the score reaches the threshold and the answer's structure is one the generator could
have produced: no longer than
max_tokens; "length" only at exactly max_tokens; no stop sequence inside; "stop" only where the
replay ends the answer there, by choosing EOT, or by choosing, token by token, one of the stop
sequences starting right after the answer (the generator cuts it from the output). Those stop
sequences ride along in the same pass, so the model still runs once. The scale and the threshold are
per model (``PRESET_TOLERANCES``), calibrated across implementations in ``mlnode/VERIFY.md``.
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

from mlnode.config import PRESETS, ModelConfig
from mlnode.generate import Sequence, TokenChoice
from mlnode.model import Transformer
from mlnode.sampling import SamplingParams, allowed_logits, log_softmax, uniform
from mlnode.tokenizer import EOT

SCALE = 0.05
"""Logprob distance (nats) at which a position scores 0. Honest re-execution by other implementations of
the tiny preset (float64, bfloat16 and float16 weights, bfloat16 activations, batching, threads, attention
kernels) differs by at most 6.9e-3 at any position; another model (one layer fewer, another init seed)
by at least 4.6e-2 at every position, and mostly far more."""
SLACK = 0.01
"""How far every logprob may move for the replayed sampler's near-ties: 1.45× the worst honest per-entry
difference measured (6.9e-3, bfloat16). Kept apart from the scale: on a flat distribution a larger slack
makes many tokens near-ties of one another, and a truncated answer's claimed EOT one of them."""
THRESHOLD = 0.8
"""The least score that matches: honest bfloat16 re-execution never scored below 0.888 in the calibration;
answers of another model (another seed, one layer fewer) or to another prompt scored ≤ 0.49
(``mlnode/VERIFY.md``, Calibration)."""


class Reason(StrEnum):
    TOKEN = "token_mismatch"
    """Some position holds a token the replayed sampler would not choose: never a match."""
    LOGPROB = "logprob_mismatch"
    """Some position's claimed logprob of its token is off by more than the slack."""
    TOP_LOGPROBS = "top_logprobs_mismatch"
    """Some position's top-k entry, or an entry of the verifier's top-k it left out, is off by more than the
    slack."""
    MALFORMED_TOP = "malformed_top_logprobs"
    """Some position's top-k list repeats a token or is shorter than the longest: never a match."""
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
    """How far an honest re-execution may stray: a position at logprob distance d scores
    max(0, 1 − d/``scale``); an answer matches from ``threshold`` up. A governance parameter of the model."""

    scale: float = SCALE
    threshold: float = THRESHOLD
    slack: float = SLACK

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a positive number, not {self.scale!r}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must lie in [0, 1], not {self.threshold!r}")
        if not (math.isfinite(self.slack) and self.slack >= 0):
            raise ValueError(f"slack must be a non-negative number, not {self.slack!r}")


PRESET_TOLERANCES: dict[str, Tolerances] = {name: Tolerances() for name in PRESETS}
"""Defaults per model preset. Calibrated on tiny; small and base take its values until measured."""


def tolerances_for(config: ModelConfig) -> Tolerances:
    """The default tolerances of the preset this model's shape is, or the generic default."""
    return next((PRESET_TOLERANCES[name] for name, shape in PRESETS.items() if shape == config), Tolerances())


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
    """Mean position score max(0, 1 − d/scale) over the scored positions, in [0, 1] (1.0 for an empty answer)."""
    token_agreement: float
    """Share of positions whose token is exactly the replayed choice (near-ties not excused)."""
    max_logprob_error: float
    mean_logprob_error: float
    """Over every claimed value: each position's token logprob and its top-k logprobs."""
    reasons: tuple[Reason, ...]
    """Everything found wrong; logprob-level reasons may appear on a match whose score is high enough."""
    failed_positions: tuple[int, ...]
    """Positions whose token the replay does not admit, whose top-k list is malformed, or whose score is
    below the threshold."""
    threshold: float = THRESHOLD
    """The threshold the score was judged against."""


@dataclass(frozen=True)
class _Positions:
    """Per answer position: bool tensors [n], the distance d [n] (float64), and the absolute errors of
    every claimed logprob."""

    agreed: Tensor
    token_ok: Tensor
    token_error: Tensor
    top_error: Tensor
    well_formed: Tensor
    errors: Tensor

    def scores(self, scale: float) -> Tensor:
        distance = torch.maximum(self.token_error, self.top_error)
        return torch.where(self.well_formed, (1 - distance / scale).clamp(min=0.0), torch.zeros_like(distance))

    def reasons(self, slack: float) -> list[Reason]:
        return [
            reason
            for reason, ok in (
                (Reason.TOKEN, self.token_ok),
                (Reason.MALFORMED_TOP, self.well_formed),
                (Reason.LOGPROB, self.token_error <= slack),
                (Reason.TOP_LOGPROBS, self.top_error <= slack),
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
    tolerances: Tolerances | None = None,
) -> InferenceVerdict:
    """Re-execute one answer and judge it (``tolerances``: the model's preset defaults unless given); raises
    ValueError only for input no generator could be asked for."""
    tolerances = tolerances or tolerances_for(model.config)
    tokens, claims = list(executed.tokens), list(executed.logprobs)
    _validate(model.config, prompt, tokens, claims, max_tokens, stop)
    structural = _structure(tokens, max_tokens, stop, finish_reason)
    scored = tokens[:max_tokens]
    stoppable = finish_reason == "stop" and Reason.SPECIAL_TOKEN not in structural
    candidates = [s for s in dict.fromkeys(stop) if len(scored) + len(s) <= max_tokens] if stoppable else []
    extensions = _extensions(candidates)
    logits = _logits(model, [prompt + scored + list(extension) for extension in extensions])
    join = len(prompt) + len(scored) - 1
    checks = _check_positions(logits[0, len(prompt) - 1 : join], claims[:max_tokens], sampling, tolerances.slack)
    if stoppable and not _ends_here(
        logits, extensions, join, scored, max_tokens, stop, candidates, sampling, tolerances.slack
    ):
        structural.append(Reason.NOT_STOPPED)
    positions = checks.scores(tolerances.scale)
    score = float(positions.mean()) if scored else 1.0
    low = [Reason.LOW_SCORE] if score < tolerances.threshold else []
    errors = checks.errors
    hard = bool(checks.token_ok.all()) and bool(checks.well_formed.all())
    failed = ~checks.token_ok | ~checks.well_formed | (positions < tolerances.threshold)
    return InferenceVerdict(
        match=not structural and not low and hard,
        score=score,
        token_agreement=float(checks.agreed.double().mean()) if scored else 1.0,
        max_logprob_error=float(errors.max()) if errors.numel() else 0.0,
        mean_logprob_error=float(errors.mean()) if errors.numel() else 0.0,
        reasons=tuple(structural + checks.reasons(tolerances.slack) + low),
        failed_positions=tuple(int(i) for i in torch.nonzero(failed).flatten()),
        threshold=tolerances.threshold,
    )


def verify_sequence(model: Transformer, sequence: Sequence, tolerances: Tolerances | None = None) -> InferenceVerdict:
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
    # the tokens whose order against this one the executor may have seen swapped: those within eta of it
    # (not chained: with a slack of 1e-2, chains of near-equal neighbours spanned a flat model's vocabulary)
    columns = torch.arange(logp.shape[1])[None, :]
    same = ((logp - logp.gather(1, rank[:, None])).abs() < eta) | (columns == rank[:, None])
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


def _check_positions(logits: Tensor, claims: list[TokenChoice], sampling: SamplingParams, slack: float) -> _Positions:
    """Token and logprob checks of every answer position at once; ``logits`` [n, vocab] predict the n claims."""
    tokens = torch.tensor([claim.token for claim in claims], dtype=torch.long)
    indices = range(len(claims))
    logprobs = log_softmax(logits)
    claimed = torch.tensor([claim.logprob for claim in claims], dtype=torch.float64)
    token_error = torch.nan_to_num((logprobs.gather(1, tokens[:, None])[:, 0].double() - claimed).abs(), nan=math.inf)
    top_error, well_formed, top_errors = _check_top(logprobs, claims)
    return _Positions(
        agreed=admissible(logits, tokens, indices, sampling, 0.0),
        token_ok=admissible(logits, tokens, indices, sampling, slack),
        token_error=token_error,
        top_error=top_error,
        well_formed=well_formed,
        errors=torch.cat([token_error, top_errors]),
    )


def _check_top(logprobs: Tensor, claims: list[TokenChoice]) -> tuple[Tensor, Tensor, Tensor]:
    """Per position, the top-k distance (k = the longest list claimed): the largest of |claimed − verifier|
    over the claimed entries and, over the verifier's own top-k entries the claim left out, how far each
    lies above the claimed k-th value (a claim says only that an unlisted token is at most that). Also
    whether each list is well formed (k distinct tokens) and the absolute errors of every claimed value."""
    count = len(claims)
    k = max((len(claim.top) for claim in claims), default=0)
    if k == 0:
        return torch.zeros(count, dtype=torch.float64), torch.ones(count, dtype=torch.bool), torch.zeros(0)
    present = torch.tensor([[j < len(claim.top) for j in range(k)] for claim in claims], dtype=torch.bool)
    padded = [list(claim.top) + [(0, 0.0)] * (k - len(claim.top)) for claim in claims]
    ids = torch.tensor([[token for token, _ in top] for top in padded], dtype=torch.long)
    values = torch.tensor([[value for _, value in top] for top in padded], dtype=torch.float64)
    mine = logprobs.gather(1, ids).double()
    errors = torch.nan_to_num((mine - values).abs(), nan=math.inf)
    claimed_error = torch.where(present, errors, torch.zeros_like(errors)).max(dim=1).values
    kth = torch.where(present, values, torch.full_like(values, math.inf)).min(dim=1).values
    kth = torch.nan_to_num(kth, nan=-math.inf)
    best, best_ids = torch.topk(logprobs, k, dim=1)
    listed = (best_ids[:, :, None] == torch.where(present, ids, -1)[:, None, :]).any(dim=2)
    above = torch.where(listed, torch.zeros_like(best.double()), (best.double() - kth[:, None]).clamp(min=0.0))
    sorted_ids = ids.sort(dim=1).values
    distinct = (sorted_ids[:, 1:] != sorted_ids[:, :-1]).all(dim=1)
    well_formed = present.all(dim=1) & distinct
    return torch.maximum(claimed_error, above.max(dim=1).values), well_formed, errors[present]
