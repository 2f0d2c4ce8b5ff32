"""Validation loss against bytes communicated: data-parallel training against DiLoCo, on this machine's CPU.

Every run trains the same model preset from the same seeded initialisation with the same inner AdamW,
learning-rate schedule and per-worker data shards, for the same number of steps (so the same tokens) per
worker; only how often and how compactly workers talk differs:

- data-parallel: every step each worker all-reduces (averages) its fp32 gradient, then takes one AdamW
  step; it reuses ``diloco.worker.inner_steps`` unchanged, with a hook that averages each parameter's
  gradient as backward produces it, and the data order of a DiLoCo H=50 run;
- DiLoCo: the real trainer, ``gonkad train``, for H ∈ {10, 50, 200} × fp32 / fp16 / int8.

Bytes are counted the way DiLoCo counts its exchange: a worker sends its whole payload to each of the
other n − 1 workers, so per exchange it sends ``payload_bytes · (n − 1)``; data-parallel's payload is the
fp32 gradient, every step. (A ring all-reduce would send 2·(n − 1)/n of the gradient instead: the same
for n = 2.) Runs go in priority order and the report is rewritten after each, so a sweep cut short by
``--budget-s`` still reports what ran. Prints a markdown section and writes it to
bench/results_diloco.md, and the curves to bench/diloco_loss_vs_bytes.png.

    .venv/bin/python bench/bench_diloco.py --steps 800 --workers 2
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from diloco.compress import Compression  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.data import data_order, load_corpus, shard, validation_batches  # noqa: E402
from diloco.metrics import read_events  # noqa: E402
from diloco.worker import evaluate, inner_optimizer, inner_steps  # noqa: E402
from mlnode.model import Transformer  # noqa: E402

RESULTS = Path(__file__).with_name("results_diloco.md")
PLOT = Path(__file__).with_name("diloco_loss_vs_bytes.png")
DP_EVAL_EVERY = 50
"""Data-parallel evaluates (and draws its data order) in blocks of this many steps, like DiLoCo H=50."""
PRIORITY = ["dp", "int8-50", "fp32-50", "fp16-50", "int8-10", "int8-200", "fp32-10", "fp32-200", "fp16-10",
            "fp16-200"]
"""Run names in the order they are run: the goal's comparison first."""


@dataclass(frozen=True)
class Point:
    step: int
    bytes_per_worker: int
    """Sent by one worker up to this step."""
    val_loss: float


@dataclass(frozen=True)
class Result:
    method: str
    inner_steps: int | None
    compression: str
    curve: list[Point]
    wall_s: float

    @property
    def label(self) -> str:
        return "data-parallel" if self.inner_steps is None else f"DiLoCo H={self.inner_steps} {self.compression}"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def data_parallel_worker(rank: int, config: TrainConfig, port: int, results: mp.SimpleQueue) -> None:
    """One data-parallel worker; rank 0 evaluates every block and puts the curve on ``results``."""
    torch.set_num_threads(1)
    workers = config.workers
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=workers)
    corpus = load_corpus(config)
    data, validation = shard(corpus, rank, workers), validation_batches(corpus, config)
    model = Transformer(config.architecture()).init_weights(config.seed)
    optimizer = inner_optimizer(model, config)

    def average(param: torch.Tensor) -> None:
        dist.all_reduce(param.grad)
        param.grad.div_(workers)

    for param in model.parameters():
        param.register_post_accumulate_grad_hook(average)
    numel = sum(p.numel() for p in model.parameters())
    bytes_per_step = Compression("fp32").payload_bytes(numel) * (workers - 1)
    curve = [Point(0, 0, evaluate(model, validation))] if rank == 0 else []
    for block in range(config.rounds):
        starts = data_order(config, rank, block, data.numel())
        inner_steps(model, optimizer, data, starts, config, block * config.inner_steps)
        if rank == 0:
            step = (block + 1) * config.inner_steps
            curve.append(Point(step, step * bytes_per_step, evaluate(model, validation)))
            log(f"dp step {step}: val loss {curve[-1].val_loss:.4f}")
    if rank == 0:
        results.put(curve)
    dist.destroy_process_group()


def run_data_parallel(base: TrainConfig, steps: int) -> Result:
    config = base.model_copy(update={"inner_steps": DP_EVAL_EVERY, "rounds": steps // DP_EVAL_EVERY})
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    began = time.perf_counter()
    mp.start_processes(data_parallel_worker, args=(config, free_port(), results), nprocs=config.workers,
                       start_method="spawn")
    return Result("data-parallel", None, "fp32", results.get(), time.perf_counter() - began)


def run_diloco(base: TrainConfig, steps: int, inner: int, compression: str, work: Path) -> Result:
    """``gonkad train`` with R·H = ``steps``; the curve comes from its metrics.jsonl."""
    name = f"{compression}-{inner}"
    out = work / name
    command = [sys.executable, "-m", "gonkad", "train", "--out", str(out), "--workers", str(base.workers),
               "--inner-steps", str(inner), "--rounds", str(steps // inner), "--compression", compression,
               "--preset", base.preset, "--batch-size", str(base.batch_size), "--seq-len", str(base.seq_len),
               "--threads", "1"]
    began = time.perf_counter()
    with (work / f"{name}.log").open("w") as output:
        subprocess.run(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT, check=True)
    wall = time.perf_counter() - began
    events = read_events(out / "metrics.jsonl")
    sent = {0: 0}
    for event in (e for e in events if e["event"] == "round"):
        sent[event["round"] + 1] = sent[event["round"]] + event["bytes_per_worker"]
    curve = [Point(e["step"], sent[e["checkpoint"]], e["val_loss"]) for e in events if e["event"] == "checkpoint"]
    return Result("DiLoCo", inner, compression, curve, wall)


def report(results: list[Result], base: TrainConfig, steps: int, skipped: list[str]) -> str:
    dp = next((r for r in results if r.inner_steps is None), None)
    tokens = steps * base.batch_size * base.seq_len
    lines = [f"## DiLoCo against data-parallel ({base.workers} workers, preset {base.preset}, batch "
             f"{base.batch_size} × seq {base.seq_len}, {steps} steps per worker)", "",
             f"Generated by `bench/bench_diloco.py --steps {steps} --workers {base.workers}` on "
             f"{os.cpu_count()} CPU cores, 1 torch thread per worker. Bytes are those one worker sends: "
             "payload · (n − 1) per exchange, fp32 gradients every step for data-parallel. "
             f"Plot: `{PLOT.name}`.", "",
             "| method | H | compression | steps per worker | tokens per worker | final val loss | loss vs DP | "
             "bytes sent per worker | bytes ratio DP/method | wall time |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for result in results:
        final = result.curve[-1]
        versus = f"{100 * (final.val_loss / dp.curve[-1].val_loss - 1):+.1f}%" if dp else "-"
        ratio = f"{dp.curve[-1].bytes_per_worker / final.bytes_per_worker:,.1f}×" if dp else "-"
        lines.append(f"| {result.method} | {result.inner_steps or 1} | {result.compression} | {final.step} | "
                     f"{tokens:,} | {final.val_loss:.4f} | {versus} | {final.bytes_per_worker:,} | {ratio} | "
                     f"{result.wall_s:.0f} s |")
    lines.append("")
    lines.append(f"Total wall time {sum(r.wall_s for r in results) / 60:.1f} min." +
                 (f" Not run: {', '.join(skipped)}." if skipped else ""))
    return "\n".join(lines) + "\n"


def plot(results: list[Result]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot
    figure, (by_bytes, by_step) = pyplot.subplots(1, 2, figsize=(12, 4.5))
    for result in results:
        sent = [p for p in result.curve if p.bytes_per_worker > 0]
        by_bytes.plot([p.bytes_per_worker for p in sent], [p.val_loss for p in sent], "o-", ms=3, label=result.label)
        by_step.plot([p.step for p in result.curve], [p.val_loss for p in result.curve], "o-", ms=3,
                     label=result.label)
    by_bytes.set(xscale="log", xlabel="bytes sent per worker", ylabel="validation loss (nats/byte)",
                 title="loss against communication")
    by_step.set(xlabel="steps per worker", ylabel="validation loss (nats/byte)", title="loss against steps")
    for axes in (by_bytes, by_step):
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(PLOT, dpi=100)
    pyplot.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=800, help="steps per worker; a multiple of 200")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--runs", default=",".join(PRIORITY), help=f"comma-separated, from {','.join(PRIORITY)}")
    parser.add_argument("--budget-s", type=float, default=None, help="start no run after this many seconds")
    args = parser.parse_args()
    if args.steps % 200:
        parser.error("--steps must be a multiple of 200 so that every H divides it")
    names = args.runs.split(",")
    if unknown := set(names) - set(PRIORITY):
        parser.error(f"unknown runs: {', '.join(sorted(unknown))}")
    base = TrainConfig(preset=args.preset, workers=args.workers, batch_size=args.batch_size, seq_len=args.seq_len)
    results: list[Result] = []
    skipped: list[str] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_diloco_") as work:
        for number, name in enumerate(names):
            if args.budget_s is not None and time.perf_counter() - began > args.budget_s:
                skipped = names[number:]
                break
            log(f"running {name} ...")
            if name == "dp":
                results.append(run_data_parallel(base, args.steps))
            else:
                compression, inner = name.split("-")
                results.append(run_diloco(base, args.steps, int(inner), compression, Path(work)))
            log(f"{name}: val loss {results[-1].curve[-1].val_loss:.4f} in {results[-1].wall_s:.0f} s")
            RESULTS.write_text(report(results, base, args.steps, names[number + 1:]))
            plot(results)
    section = report(results, base, args.steps, skipped)
    RESULTS.write_text(section)
    print(section)


if __name__ == "__main__":
    main()
