"""Validation loss against bytes communicated: data-parallel training against DiLoCo, on this machine's CPU.

Every run trains the same model preset from the same seeded initialisation with the same inner AdamW,
learning-rate schedule and per-worker data shards, for the same number of steps (so the same tokens) per
worker; only how often and how compactly workers talk differs:

- data-parallel (``bench/data_parallel.py``): every step each worker all-reduces (averages) its fp32
  gradient, then takes one AdamW step, with the inner loop and the data order of a DiLoCo H=50 run;
- DiLoCo: the real trainer, ``gonkad train``, for H ∈ {10, 50, 200} × fp32 / fp16 / int8 by default; any
  run named ``CODEC-H`` (``int4-60``: int4, H = 60) can be asked for.

Bytes are counted the way DiLoCo counts its exchange: a worker sends its whole payload to each of the
other n − 1 workers, so per exchange it sends ``payload_bytes · (n − 1)``; data-parallel's payload is the
fp32 gradient, every step. (A ring all-reduce would send 2·(n − 1)/n of the gradient instead: the same
for n = 2.) Runs go in priority order and the report is rewritten after each, so a sweep cut short by
``--budget-s`` still reports what ran; each finished run is kept under bench/out/diloco/ and reused
by a later invocation with the same settings (``--fresh`` reruns). Prints a markdown section and writes it to
bench/results_diloco_STEPS.md, and the curves to bench/diloco_loss_vs_bytes_STEPS.png.

    .venv/bin/python bench/bench_diloco.py --steps 800 --workers 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import log, wait_all  # noqa: E402
from bench.data_parallel import rank_command  # noqa: E402
from diloco.compress import Compression  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.metrics import read_events  # noqa: E402
from gonkad.localnet import free_ports  # noqa: E402
from mlnode.model import Transformer  # noqa: E402

HERE = Path(__file__).parent
SAVED = HERE / "out" / "diloco"
DP_EVAL_EVERY = 50
"""Data-parallel evaluates (and draws its data order) in blocks of this many steps, like DiLoCo H=50."""
PRIORITY = ["dp", "int8-50", "fp32-50", "fp16-50", "int8-10", "int8-200", "fp32-10", "fp32-200", "fp16-10", "fp16-200"]
"""Run names in the order they are run: the goal's comparison first."""
RUN_NAME = re.compile(r"^(fp32|fp16|int8|int4)-([1-9][0-9]*)$")
"""A DiLoCo run: codec and H."""


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


def run_data_parallel(base: TrainConfig, steps: int, work: Path) -> Result:
    """Two ``bench/data_parallel.py`` ranks on loopback; rank 0 writes the curve."""
    config = base.model_copy(update={"inner_steps": DP_EVAL_EVERY, "rounds": steps // DP_EVAL_EVERY})
    master, out = f"127.0.0.1:{free_ports(1)[0]}", work / "dp.json"
    began = time.perf_counter()
    wait_all(
        [subprocess.Popen(rank_command(rank, config, master, out), cwd=REPO) for rank in range(config.workers)],
        "a data-parallel rank",
    )
    wall = time.perf_counter() - began
    numel = sum(p.numel() for p in Transformer(config.architecture()).parameters())
    bytes_per_step = Compression("fp32").payload_bytes(numel) * (config.workers - 1)
    curve = [Point(step, step * bytes_per_step, loss) for step, loss in json.loads(out.read_text())["curve"]]
    return Result("data-parallel", None, "fp32", curve, wall)


def run_diloco(base: TrainConfig, steps: int, name: str, work: Path) -> Result:
    """``gonkad train`` with R·H = ``steps``; the curve comes from its metrics.jsonl."""
    compression, inner = parse_run(name)
    out = work / name
    command = [
        sys.executable,
        "-m",
        "gonkad",
        "train",
        "--out",
        str(out),
        "--workers",
        str(base.workers),
        "--inner-steps",
        str(inner),
        "--rounds",
        str(steps // inner),
        "--compression",
        compression,
        "--preset",
        base.preset,
        "--batch-size",
        str(base.batch_size),
        "--seq-len",
        str(base.seq_len),
        "--outer-lr",
        str(base.outer_lr),
        "--outer-momentum",
        str(base.outer_momentum),
        "--threads",
        "1",
    ]
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


def parse_run(name: str) -> tuple[str, int]:
    """``int4-60`` → (int4, H = 60)."""
    match = RUN_NAME.match(name)
    if match is None:
        raise ValueError(f"not a run name: {name!r}")
    return match[1], int(match[2])


def report(results: list[Result], base: TrainConfig, steps: int, skipped: list[str], command: str) -> str:
    dp = next((r for r in results if r.inner_steps is None), None)
    tokens = steps * base.batch_size * base.seq_len
    lines = [
        f"## DiLoCo against data-parallel ({base.workers} workers, preset {base.preset}, batch "
        f"{base.batch_size} × seq {base.seq_len}, {steps} steps per worker)",
        "",
        f"Generated by `{command}` on "
        f"{os.cpu_count()} CPU cores, 1 torch thread per worker. Bytes are those one worker sends: "
        "payload · (n − 1) per exchange, fp32 gradients every step for data-parallel. "
        f"Outer step: lr {base.outer_lr:g}, momentum {base.outer_momentum:g}. Plot: `{plot_path(steps).name}`.",
        "",
        "| method | H | compression | steps per worker | tokens per worker | final val loss | loss vs DP | "
        "bytes sent per worker | bytes ratio DP/method | wall time |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        final = result.curve[-1]
        versus = f"{100 * (final.val_loss / dp.curve[-1].val_loss - 1):+.1f}%" if dp else "-"
        ratio = f"{dp.curve[-1].bytes_per_worker / final.bytes_per_worker:,.1f}×" if dp else "-"
        lines.append(
            f"| {result.method} | {result.inner_steps or 1} | {result.compression} | {final.step} | "
            f"{tokens:,} | {final.val_loss:.4f} | {versus} | {final.bytes_per_worker:,} | {ratio} | "
            f"{result.wall_s:.0f} s |"
        )
    lines.append("")
    lines.append(
        f"Total wall time {sum(r.wall_s for r in results) / 60:.1f} min."
        + (f" Not run: {', '.join(skipped)}." if skipped else "")
    )
    return "\n".join(lines) + "\n"


def saved_path(base: TrainConfig, steps: int, name: str) -> Path:
    """Where a finished run's result is kept, keyed by everything that decides it: rerunning the benchmark
    with the same settings reuses it (data-parallel ignores the outer step, so its key leaves that out)."""
    settings = base.model_dump(mode="json")
    if name == "dp":
        settings.pop("outer_lr")
        settings.pop("outer_momentum")
    key = hashlib.sha256(json.dumps({"steps": steps, "run": name, **settings}, sort_keys=True).encode())
    return SAVED / f"{name}-{steps}-{key.hexdigest()[:12]}.json"


def load_result(path: Path) -> Result:
    body = json.loads(path.read_text())
    return Result(
        body["method"],
        body["inner_steps"],
        body["compression"],
        [Point(**point) for point in body["curve"]],
        body["wall_s"],
    )


def results_path(steps: int) -> Path:
    return HERE / f"results_diloco_{steps}.md"


def plot_path(steps: int) -> Path:
    return HERE / f"diloco_loss_vs_bytes_{steps}.png"


def plot(results: list[Result], steps: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (by_bytes, by_step) = pyplot.subplots(1, 2, figsize=(12, 4.5))
    for result in results:
        sent = [p for p in result.curve if p.bytes_per_worker > 0]
        by_bytes.plot([p.bytes_per_worker for p in sent], [p.val_loss for p in sent], "o-", ms=3, label=result.label)
        by_step.plot([p.step for p in result.curve], [p.val_loss for p in result.curve], "o-", ms=3, label=result.label)
    by_bytes.set(
        xscale="log",
        xlabel="bytes sent per worker",
        ylabel="validation loss (nats/byte)",
        title="loss against communication",
    )
    by_step.set(xlabel="steps per worker", ylabel="validation loss (nats/byte)", title="loss against steps")
    for axes in (by_bytes, by_step):
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(plot_path(steps), dpi=100)
    pyplot.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=800, help="steps per worker; a multiple of every run's H")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--outer-lr", type=float, default=TrainConfig().outer_lr)
    parser.add_argument("--outer-momentum", type=float, default=TrainConfig().outer_momentum)
    parser.add_argument(
        "--runs", default=",".join(PRIORITY), help=f"comma-separated: dp and CODEC-H (default {','.join(PRIORITY)})"
    )
    parser.add_argument("--budget-s", type=float, default=None, help="start no run after this many seconds")
    parser.add_argument("--fresh", action="store_true", help="rerun even runs saved under bench/out/diloco/")
    args = parser.parse_args()
    names = args.runs.split(",")
    if unknown := {name for name in names if name != "dp" and not RUN_NAME.match(name)}:
        parser.error(f"unknown runs: {', '.join(sorted(unknown))}")
    if uneven := [name for name in names if args.steps % (DP_EVAL_EVERY if name == "dp" else parse_run(name)[1])]:
        parser.error(f"--steps {args.steps} is not a multiple of H for: {', '.join(uneven)}")
    base = TrainConfig(
        preset=args.preset,
        workers=args.workers,
        batch_size=args.batch_size,
        seq_len=args.seq_len,
        outer_lr=args.outer_lr,
        outer_momentum=args.outer_momentum,
    )
    command = " ".join(["bench/bench_diloco.py", *sys.argv[1:]])
    results: list[Result] = []
    skipped: list[str] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_diloco_") as work:
        for number, name in enumerate(names):
            if args.budget_s is not None and time.perf_counter() - began > args.budget_s:
                skipped = names[number:]
                break
            saved = saved_path(base, args.steps, name)
            if saved.exists() and not args.fresh:
                log(f"{name}: reusing {saved}")
                results.append(load_result(saved))
            else:
                log(f"running {name} ...")
                if name == "dp":
                    results.append(run_data_parallel(base, args.steps, Path(work)))
                else:
                    results.append(run_diloco(base, args.steps, name, Path(work)))
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_text(json.dumps(asdict(results[-1])))
            log(f"{name}: val loss {results[-1].curve[-1].val_loss:.4f} in {results[-1].wall_s:.0f} s")
            results_path(args.steps).write_text(report(results, base, args.steps, names[number + 1 :], command))
            plot(results, args.steps)
    section = report(results, base, args.steps, skipped, command)
    results_path(args.steps).write_text(section)
    print(section)


if __name__ == "__main__":
    main()
