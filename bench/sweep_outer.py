"""Tune DiLoCo's outer step cheaply: K workers trained in turn in one process, fp32 exchange.

The same inner loop, data shards, data order and outer optimizer as ``gonkad train`` (``diloco.inner``,
``diloco.data``, ``diloco.outer``), without processes, rendezvous or checkpoints, so a sweep of outer
learning rates and momenta fits on one core per setting. Each argument is ``FIELD=VALUE`` for
``TrainConfig`` plus ``steps`` (per worker); prints one JSON line with the validation curve every 100
steps. ``workers=1 outer_lr=1 outer_momentum=0`` is one worker training alone.

    .venv/bin/python bench/sweep_outer.py steps=800 inner_steps=50 outer_lr=0.7 outer_momentum=0.5
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diloco.compress import Compression  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.data import data_order, load_corpus, shard, validation_batches  # noqa: E402
from diloco.inner import evaluate, inner_optimizer, inner_steps  # noqa: E402
from diloco.outer import GlobalModel, average  # noqa: E402
from mlnode.model import Transformer  # noqa: E402

EVAL_EVERY = 100


def sweep_point(config: TrainConfig) -> list[tuple[int, float]]:
    """Validation loss of the global model every ``EVAL_EVERY`` steps (and at the end)."""
    corpus = load_corpus(config)
    validation = validation_batches(corpus, config)
    shards = [shard(corpus, index, config.workers) for index in range(config.workers)]
    global_model = GlobalModel(
        Transformer(config.architecture()).init_weights(config.seed).state_dict(),
        config.outer_lr,
        config.outer_momentum,
    )
    models = [Transformer(config.architecture()).init_weights(config.seed) for _ in range(config.workers)]
    optimizers = [inner_optimizer(model, config) for model in models]
    compression = Compression(config.compression, config.int8_chunk)
    numel = sum(p.numel() for p in models[0].parameters())
    curve = []
    for round_number in range(config.rounds):
        payloads = []
        for index, (model, optimizer, data) in enumerate(zip(models, optimizers, shards, strict=True)):
            model.load_state_dict(global_model.weights())
            starts = data_order(config, index, round_number, data.numel())
            inner_steps(model, optimizer, data, starts, config, round_number * config.inner_steps)
            payloads.append(compression.encode(global_model.pseudo_gradient(model.state_dict())))
        global_model.step(average(payloads, compression, numel))
        step = (round_number + 1) * config.inner_steps
        if step % EVAL_EVERY == 0 or round_number == config.rounds - 1:
            models[0].load_state_dict(global_model.weights())
            curve.append((step, round(evaluate(models[0], validation), 4)))
    return curve


def main() -> None:
    torch.set_num_threads(1)
    settings: dict[str, str] = dict(argument.split("=", 1) for argument in sys.argv[1:])
    steps = int(settings.pop("steps", "800"))
    base = TrainConfig.model_validate(settings)
    if steps % base.inner_steps:
        sys.exit(f"steps={steps} is not a multiple of inner_steps={base.inner_steps}")
    config = base.model_copy(update={"rounds": steps // base.inner_steps})
    began = time.perf_counter()
    curve = sweep_point(config)
    print(
        json.dumps({"settings": sys.argv[1:], "curve": curve, "seconds": round(time.perf_counter() - began)}),
        flush=True,
    )


if __name__ == "__main__":
    main()
