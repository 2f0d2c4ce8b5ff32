"""A trained tiny model for the verifier's calibration (``bench/calibrate_verify.py --weights``): the tiny preset
trained alone for ``--steps`` AdamW steps on the first ``--corpus-bytes`` of ``--corpus`` (the Python
documentation's prose by default, or the standard library's code; DiLoCo's inner loop with one worker and one
round, ``diloco.inner``), its state dict saved to ``--out``, and a sampled continuation of ``--prompt`` printed
to show what it learned. A trained model's
distributions are peaked, unlike the random preset's (~1/260 on every token), which moves what honest
re-execution and forgeries do to its logprobs (mlnode/VERIFY.md, "A trained model").

    PYTHONPATH=$PWD .venv/bin/python bench/train_tiny.py [--steps 600] [--corpus stdlib] [--out trained_tiny.pt]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import log  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.data import data_order, load_corpus, shard, validation_batches  # noqa: E402
from diloco.inner import evaluate, initial_weights, inner_optimizer, inner_steps  # noqa: E402
from mlnode.model import Transformer  # noqa: E402
from mlnode.tokenizer import decode, encode  # noqa: E402


@torch.no_grad()
def sample(model: Transformer, prompt: str, tokens: int, temperature: float = 0.8) -> str:
    """A seeded continuation of ``prompt`` drawn from the model's byte distribution (ids below 256 only)."""
    generator = torch.Generator().manual_seed(0)
    ids = encode(prompt)
    for _ in range(tokens):
        logits = model(torch.tensor([ids[-model.config.max_seq_len :]]))[0, -1, :256] / temperature
        ids.append(int(torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)))
    return decode(ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--corpus-bytes", type=int, default=4_000_000)
    parser.add_argument("--corpus", choices=("python-docs", "stdlib"), default="python-docs")
    parser.add_argument("--out", type=Path, default=Path("trained_tiny.pt"))
    parser.add_argument("--prompt", default="The interpreter ")
    args = parser.parse_args()
    config = TrainConfig(
        workers=1,
        inner_steps=args.steps,
        rounds=1,
        corpus=args.corpus,
        corpus_bytes=args.corpus_bytes,
        batch_size=16,
    )
    corpus = load_corpus(config)
    data = shard(corpus, 0, 1)
    model = Transformer(config.architecture())
    model.load_state_dict(initial_weights(config))
    started = time.perf_counter()
    losses = inner_steps(model, inner_optimizer(model, config), data, data_order(config, 0, 0, len(data)), config, 0)
    tail = sum(losses[-20:]) / len(losses[-20:])
    log(f"{len(losses)} steps in {time.perf_counter() - started:.0f} s; the last 20 steps' mean loss {tail:.3f}")
    print(f"validation loss {evaluate(model, validation_batches(corpus, config)):.3f} nats per byte")
    torch.save(model.state_dict(), args.out)
    print(f"sample: {sample(model.eval(), args.prompt, 300)!r}")


if __name__ == "__main__":
    main()
