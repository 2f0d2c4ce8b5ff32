"""Calibration of the verifier's tolerance across implementations (issue 26, item 5).

Honest answers are generated on the tiny preset by the reference executor (float32, KV-cache decode,
one torch thread) and re-executed by verifiers that are other correct implementations of the same model,
answer i by variant i mod |variants|:

- ``float32``: the reference verifier (one teacher-forced pass, one thread, the SDPA kernel);
- ``float64``: every weight and activation in float64;
- ``bfloat16`` / ``float16``: weights cast, so every activation runs in that type too;
- ``bf16_autocast``: float32 weights, matmuls in bfloat16 (CPU autocast);
- ``threads2``: two torch threads;
- ``batched``: the answer's rows in one batch with a longer filler row (right padding, another shape);
- ``sdpa_math``: SDPA restricted to its math backend;
- ``plain_attention``: attention written out (softmax(QKᵀ/√d + causal mask)·V), no SDPA.

Dishonest answers of every kind of ``mlnode.forgery`` plus ``fewer_layers`` (the model less its last
block), ``int8`` (every matrix quantised per output row to int8, dequantised) and ``altered`` (one token
of an honest answer replaced by another byte, every logprob the true one for the altered text) are
verified by the reference verifier. A forgery "caught" is a verdict with match false.

    PYTHONPATH=$PWD .venv/bin/python bench/calibrate_verify.py [--honest 10000] [--per-kind 1000] \
        [--scale 0.05] [--threshold 0.8] [--slack 0.01] [--strict] [--weights trained.pt]

Prints a markdown report (counts, false mismatch and catch rates, score quantiles per variant and kind); with
``--strict`` the same corpus is judged a second time with the strict profile (``STRICT``), a second report; with
``--weights`` the model is a trained tiny model (its state dict) rather than the random one.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mlnode import forgery  # noqa: E402
from mlnode.generate import Sequence, generate  # noqa: E402
from mlnode.model import Transformer  # noqa: E402
from mlnode.threads import torch_threads  # noqa: E402
from mlnode.tokenizer import EOT  # noqa: E402
from mlnode.verify import InferenceVerdict, Tolerances, teacher_forced, verify_sequence  # noqa: E402
from mlnode.weights import random_model  # noqa: E402

QUANTILES = (0.0, 0.001, 0.01, 0.5, 0.99, 1.0)
STRICT = Tolerances(scale=0.01, threshold=0.8, slack=0.002)
"""mlnode/VERIFY.md's strict profile: float32/float16 implementations only, int8 weights caught."""
EXTRA_KINDS = ("fewer_layers", "int8", "altered")


class Padded(nn.Module):
    """The model run in a batch with one filler row longer than any of the caller's (right padding)."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.inner = model
        self.config = model.config
        self.output = model.output

    def forward(self, tokens: Tensor) -> Tensor:
        width = min(tokens.shape[1] + 7, self.config.max_seq_len)
        batch = torch.full((tokens.shape[0] + 1, width), EOT, dtype=tokens.dtype)
        batch[:-1, : tokens.shape[1]] = tokens
        batch[-1] = torch.arange(width) % 256
        return self.inner(batch)[:-1, : tokens.shape[1]]


def plain_sdpa(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None = None, is_causal: bool = False, **_: object
) -> Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if is_causal:
        length = q.shape[-2]
        causal = torch.ones(length, k.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, -math.inf)
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, -math.inf)
    return torch.softmax(scores, dim=-1) @ v


@contextlib.contextmanager
def plain_attention() -> Iterator[None]:
    original = F.scaled_dot_product_attention
    F.scaled_dot_product_attention = plain_sdpa  # type: ignore[assignment]
    try:
        yield
    finally:
        F.scaled_dot_product_attention = original


@dataclass
class Variant:
    name: str
    model: Transformer
    context: Callable[[], contextlib.AbstractContextManager[object]]
    threads: int = 1


def variants(model: Transformer) -> list[Variant]:
    none = contextlib.nullcontext

    def cast_to(dtype: torch.dtype) -> Transformer:
        return copy.deepcopy(model).to(dtype)

    return [
        Variant("float32", model, none),
        Variant("float64", cast_to(torch.float64), none),
        Variant("bfloat16", cast_to(torch.bfloat16), none),
        Variant("float16", cast_to(torch.float16), none),
        Variant("bf16_autocast", model, lambda: torch.autocast("cpu", dtype=torch.bfloat16)),
        Variant("threads2", model, none, threads=2),
        Variant("batched", cast(Transformer, Padded(model)), none),
        Variant("sdpa_math", model, lambda: sdpa_kernel(SDPBackend.MATH)),
        Variant("plain_attention", model, plain_attention),
    ]


def int8(model: Transformer) -> Transformer:
    quantised = copy.deepcopy(model)
    with torch.no_grad():
        for param in quantised.parameters():
            if param.dim() == 2:
                step = param.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127
                param.copy_((param / step).round().clamp(-127, 127) * step)
    return quantised


def fewer_layers(model: Transformer) -> Transformer:
    shorter = copy.deepcopy(model)
    shorter.layers = shorter.layers[:-1]
    return shorter


def altered(model: Transformer, base: Sequence, rng: random.Random) -> Sequence:
    """One token of ``base`` replaced by another byte; every logprob the reference model's for the new text."""
    tokens = list(base.tokens)
    position = rng.randrange(len(tokens))
    tokens[position] = (tokens[position] + rng.randrange(1, 256)) % 256
    request = replace(base.request, stop=())
    logprobs = forgery.reported(teacher_forced(model, request.prompt, tokens), tokens, request.top_logprobs)
    return Sequence(request, tokens, logprobs, base.finish_reason)


def quantiles(values: list[float]) -> str:
    return " / ".join(f"{float(np.quantile(values, q)):.3f}" for q in QUANTILES) if values else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--honest", type=int, default=900)
    parser.add_argument("--per-kind", type=int, default=100)
    parser.add_argument("--lengths", type=int, nargs=2, default=(8, 24))
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--scale", type=float, default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--slack", type=float, default=None)
    parser.add_argument("--strict", action="store_true", help="also judge the corpus with the strict profile")
    parser.add_argument("--weights", type=Path, default=None, help="a trained tiny model's state dict (torch.save)")
    args = parser.parse_args()
    loaded = random_model("tiny", 1)
    model = loaded.model
    if args.weights is not None:
        model.load_state_dict(torch.load(args.weights, weights_only=True))
    defaults = Tolerances()
    tolerances = Tolerances(
        args.scale if args.scale is not None else defaults.scale,
        args.threshold if args.threshold is not None else defaults.threshold,
        args.slack if args.slack is not None else defaults.slack,
    )
    lengths = (args.lengths[0], args.lengths[1])
    rng = random.Random(args.seed)
    start = time.perf_counter()
    with torch_threads(1):
        honest = [forgery.honest_answer(model, rng, lengths) for _ in range(args.honest)]
        forger = forgery.Forger.around(model, honest, lengths, args.seed)
        dishonest: dict[str, list[Sequence]] = {}
        for kind in forgery.KINDS:
            dishonest[kind] = [forger.forge(kind) for _ in range(args.per_kind)]
        shorter, quantised = fewer_layers(model), int8(model)
        dishonest["fewer_layers"] = [
            generate(shorter, forgery.random_request(rng, lengths)) for _ in range(args.per_kind)
        ]
        dishonest["int8"] = [generate(quantised, forgery.random_request(rng, lengths)) for _ in range(args.per_kind)]
        bases = [answer for answer in honest if answer.tokens]
        dishonest["altered"] = [altered(model, rng.choice(bases), rng) for _ in range(args.per_kind)]
    built = time.perf_counter() - start
    for profile in [tolerances, STRICT] if args.strict else [tolerances]:
        report(
            model, honest, dishonest, profile, f"corpus seed {args.seed}, max_tokens {lengths[0]}–{lengths[1]}", built
        )


def report(
    model: Transformer,
    honest: list[Sequence],
    dishonest: dict[str, list[Sequence]],
    tolerances: Tolerances,
    corpus: str,
    built: float,
) -> None:
    """Judge the corpus with ``tolerances`` and print its tables."""
    start = time.perf_counter()
    implementations = variants(model)
    by_variant: dict[str, list[InferenceVerdict]] = {v.name: [] for v in implementations}
    for index, answer in enumerate(honest):
        variant = implementations[index % len(implementations)]
        with torch_threads(variant.threads), variant.context():
            by_variant[variant.name].append(verify_sequence(variant.model, answer, tolerances))
    with torch_threads(1):
        by_kind = {kind: [verify_sequence(model, a, tolerances) for a in batch] for kind, batch in dishonest.items()}
    judged = time.perf_counter() - start
    honest_total = sum(len(v) for v in by_variant.values())
    false = sum(not verdict.match for batch in by_variant.values() for verdict in batch)
    print(
        f"Tiny preset (`tiny-seed1`), {corpus}; scale {tolerances.scale:g}, threshold {tolerances.threshold:g}, "
        f"slack {tolerances.slack:g}. Built in {built:.0f} s, judged in {judged:.0f} s. Score quantiles: min / p0.1 "
        "/ p1 / p50 / p99 / max.\n"
    )
    print(f"Honest: {honest_total} answers, {false} false mismatches ({false / max(honest_total, 1):.2%}).\n")
    print("| verifier implementation | answers | false mismatches | score quantiles | reasons of the mismatches |")
    print("|---|---:|---:|---|---|")
    for name, batch in by_variant.items():
        failed = [v for v in batch if not v.match]
        reasons = sorted({str(r) for v in failed for r in v.reasons})
        scores = quantiles([v.score for v in batch])
        print(f"| {name} | {len(batch)} | {len(failed)} | {scores} | {', '.join(reasons) or '–'} |")
    print("\n| dishonest kind | answers | caught | catch rate | score quantiles |")
    print("|---|---:|---:|---:|---|")
    for kind, batch in by_kind.items():
        caught = sum(not v.match for v in batch)
        scores = quantiles([v.score for v in batch])
        print(f"| {kind} | {len(batch)} | {caught} | {caught / max(len(batch), 1):.1%} | {scores} |")
    print(flush=True)


if __name__ == "__main__":
    main()
