"""Verification by re-execution: how it scores honest and forged answers, and what it costs.

(a) Score and max-logprob-error distributions per kind (honest and each dishonest kind of
``mlnode.forgery``) over a seeded corpus on the tiny preset, generated on one torch thread; every tenth
honest answer is verified on two threads, everything else on one.
(b) Wall time of ``verify`` against ``generate`` for the same request (sampled, top_logprobs 5, an answer
that runs to max_tokens), per preset and answer length, interleaved run by run; medians.

Prints a markdown section and writes it to ``bench/results_verify.md``.

    .venv/bin/python bench/bench_verify.py [--per-kind 200] [--runs 5] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mlnode import forgery  # noqa: E402
from mlnode.generate import MAX_TOP_LOGPROBS, GenerationRequest, Sequence, generate  # noqa: E402
from mlnode.model import Transformer  # noqa: E402
from mlnode.sampling import SamplingParams  # noqa: E402
from mlnode.tokenizer import chat_prompt  # noqa: E402
from mlnode.verify import SCALE, SLACK, THRESHOLD, verify_sequence  # noqa: E402
from mlnode.weights import random_model  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "results_verify.md"
PROMPT = chat_prompt([("user", "Write a long story about a lighthouse keeper.")])
QUANTILES = (0.0, 0.01, 0.5, 0.99, 1.0)


def quantiles(values: list[float]) -> str:
    return " / ".join(f"{float(np.quantile(values, q)):.3g}" for q in QUANTILES)


def distributions(per_kind: int, lengths: tuple[int, int], seed: int) -> list[str]:
    model = random_model("tiny", 1).model
    with forgery.torch_threads(1):
        start = time.perf_counter()
        answers = forgery.corpus(model, per_kind, per_kind, lengths, seed)
        built = time.perf_counter() - start
    verdicts = forgery.judged(model, answers)
    lines = [
        f"Corpus: seed {seed}, {per_kind} answers per kind, max_tokens {lengths[0]}–{lengths[1]}, "
        f"built in {built:.0f} s. Quantiles are min / p1 / p50 / p99 / max.",
        "",
        "| kind | answers | matched | score | max logprob error |",
        "|---|---:|---:|---|---|",
    ]
    for kind, batch in verdicts.items():
        lines.append(
            f"| {kind} | {len(batch)} | {sum(v.match for v in batch)} | "
            f"{quantiles([v.score for v in batch])} | {quantiles([v.max_logprob_error for v in batch])} |"
        )
    return lines


def full_length_answer(model: Transformer, length: int) -> Sequence:
    """The first seed whose sampled answer runs to ``length`` tokens (EOT ends many random ones early)."""
    for seed in range(100):
        request = GenerationRequest(PROMPT, length, SamplingParams(1.0, 0.95, seed), top_logprobs=MAX_TOP_LOGPROBS)
        answer = generate(model, request)
        if answer.finish_reason == "length":
            return answer
    raise RuntimeError(f"no seed below 100 gives {length} tokens")


def cost(presets: list[str], lengths: list[int], runs: int) -> list[str]:
    lines = ["| preset | answer tokens | generate ms | verify ms | verify / generate |", "|---|---:|---:|---:|---:|"]
    for preset in presets:
        model = random_model(preset, 1).model
        for length in lengths:
            answer = full_length_answer(model, length)
            generated, verified = [], []
            for _ in range(runs):
                start = time.perf_counter()
                again = generate(model, answer.request)
                generated.append(time.perf_counter() - start)
                start = time.perf_counter()
                verdict = verify_sequence(model, again)
                verified.append(time.perf_counter() - start)
                assert verdict.match, verdict
            gen, ver = statistics.median(generated), statistics.median(verified)
            lines.append(f"| {preset} | {length} | {gen * 1000:.1f} | {ver * 1000:.1f} | {ver / gen:.1%} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=200)
    parser.add_argument("--lengths", type=int, nargs=2, default=(8, 40), metavar=("MIN", "MAX"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--presets", nargs="+", default=["tiny", "base"])
    parser.add_argument("--answer-tokens", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch threads for (b)")
    args = parser.parse_args()
    command = " ".join(["bench/bench_verify.py", *sys.argv[1:]])
    section = [
        "## Verification by re-execution (issue: ML node)",
        "",
        f"`.venv/bin/python {command}`",
        "",
        f"Machine: {os.cpu_count()}-core {platform.machine()} VM, CPU only, torch {torch.__version__}.",
        "",
        f"Score scale {SCALE:g}, near-tie slack {SLACK:g} for the replayed choice; "
        f"match iff every token is admissible, the structure is right and score ≥ {THRESHOLD}.",
        "",
        "### (a) Honest and forged answers, tiny preset",
        "",
        *distributions(args.per_kind, tuple(args.lengths), args.seed),
        "",
        f"### (b) Cost of verifying against generating the same answer (torch threads: {args.threads}, "
        f"median of {args.runs})",
        "",
    ]
    with forgery.torch_threads(args.threads):
        section += cost(args.presets, args.answer_tokens, args.runs)
    section += [
        "",
        f"1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
        "(other processes share the machine; the ratio is measured run by run, side by side).",
    ]
    text = "\n".join(section) + "\n"
    OUTPUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
