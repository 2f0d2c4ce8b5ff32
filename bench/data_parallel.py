"""One data-parallel worker: the baseline DiLoCo is measured against.

Every step each worker computes its gradient on its own shard, the workers average the whole fp32
gradient with one all-reduce (one bucket, as DistributedDataParallel does for a model this small), and
each takes the same AdamW step. It reuses ``diloco.inner.inner_steps`` unchanged, with a hook that fires
the all-reduce once backward has produced every gradient, and the data order of a DiLoCo run whose H
is the config's ``inner_steps``; rank 0 evaluates after every such block. Run as a process per rank (so a
benchmark can put ranks in different network namespaces):

    python bench/data_parallel.py --rank R --world W --master HOST:PORT --config '{...}' --out curve.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import log  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.data import data_order, load_corpus, shard, validation_batches  # noqa: E402
from diloco.inner import evaluate, inner_optimizer, inner_steps  # noqa: E402
from mlnode.model import Transformer  # noqa: E402

SCRIPT = Path(__file__).resolve()


def rank_command(rank: int, config: TrainConfig, master: str, out: Path) -> list[str]:
    """The command line that runs ``rank`` of a data-parallel run; rank 0 writes its result to ``out``."""
    return [
        sys.executable,
        str(SCRIPT),
        "--rank",
        str(rank),
        "--world",
        str(config.workers),
        "--master",
        master,
        "--config",
        config.model_dump_json(),
        "--out",
        str(out),
    ]


def average_gradients_each_step(model: Transformer, workers: int) -> None:
    """After the last gradient of a backward pass is accumulated, replace every gradient by the mean over
    workers, in one flat all-reduce."""
    params = [p for p in model.parameters() if p.requires_grad]
    ready: list[torch.Tensor] = []

    def on_gradient(param: torch.Tensor) -> None:
        ready.append(param)
        if len(ready) < len(params):
            return
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)
        flat.div_(workers)
        for p, part in zip(params, torch.split(flat, [p.numel() for p in params]), strict=True):
            p.grad.copy_(part.view_as(p.grad))
        ready.clear()

    for param in params:
        param.register_post_accumulate_grad_hook(on_gradient)


def train(config: TrainConfig, rank: int, master: str) -> dict[str, object]:
    """``config.rounds`` blocks of ``config.inner_steps`` steps; rank 0 returns the validation curve and
    how long training took (after setup, up to the last step)."""
    torch.set_num_threads(1)
    workers = config.workers
    dist.init_process_group(
        "gloo", init_method=f"tcp://{master}", rank=rank, world_size=workers, timeout=timedelta(minutes=10)
    )
    corpus = load_corpus(config)
    data, validation = shard(corpus, rank, workers), validation_batches(corpus, config)
    model = Transformer(config.architecture()).init_weights(config.seed)
    optimizer = inner_optimizer(model, config)
    average_gradients_each_step(model, workers)
    curve = [(0, evaluate(model, validation))] if rank == 0 else []
    dist.barrier()
    began = time.perf_counter()
    for block in range(config.rounds):
        starts = data_order(config, rank, block, data.numel())
        inner_steps(model, optimizer, data, starts, config, block * config.inner_steps)
        if rank == 0:
            curve.append(((block + 1) * config.inner_steps, evaluate(model, validation)))
            log(f"dp step {curve[-1][0]}: val loss {curve[-1][1]:.4f}")
    dist.barrier()
    train_s = time.perf_counter() - began
    dist.destroy_process_group()
    return {"curve": curve, "train_s": train_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="HOST:PORT of rank 0's rendezvous")
    parser.add_argument("--config", required=True, help="TrainConfig as JSON; inner_steps is the eval block")
    parser.add_argument("--out", help="rank 0 writes the curve and timing here as JSON")
    args = parser.parse_args()
    config = TrainConfig.model_validate_json(args.config).model_copy(update={"workers": args.world})
    result = train(config, args.rank, args.master)
    if args.rank == 0 and args.out:
        Path(args.out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
