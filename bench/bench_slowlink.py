"""Wall-clock of DiLoCo against data-parallel when the two workers sit on opposite ends of a slow link.

Two workers train the same model for the same steps (so the same tokens) each, once over loopback and
once over an emulated wide-area link between two network namespaces (``bench/slowlink.py``: by default
100 Mbit/s, 50 ms round trip, a 100 ms tail-drop queue). Data-parallel all-reduces its fp32 gradient
every step (``bench/data_parallel.py``); DiLoCo is the real ``gonkad train``, with worker0 and the
coordinator in one namespace and worker1 joining from the other (``--join``), exchanging pseudo-gradients
every H steps. Reports the end-to-end wall time (process start to exit) and the training time (first
step to the last, evaluations included), medians over ``--repeats`` runs, and their ratios. Needs root.
Prints a markdown section and writes it to bench/results_slowlink.md.

    .venv/bin/python bench/bench_slowlink.py --steps 200 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import log, wait_all  # noqa: E402
from bench.data_parallel import rank_command  # noqa: E402
from bench.slowlink import SlowLink  # noqa: E402
from diloco.config import TrainConfig  # noqa: E402
from diloco.metrics import read_events  # noqa: E402
from gonkad.localnet import free_ports  # noqa: E402

RESULTS = Path(__file__).with_name("results_slowlink.md")
PORT = 29500
"""Rendezvous port inside the fresh namespaces (nothing else listens there)."""


@dataclass(frozen=True)
class Timing:
    wall_s: float
    train_s: float
    val_loss: float


@dataclass(frozen=True)
class Setup:
    """Where the two workers run: ``place(side, argv)`` wraps a command for side a or b."""

    name: str
    host: str
    """Side a's address, which side b connects to."""
    place: Callable[[str, list[str]], list[str]]
    env: Callable[[str], dict[str, str]]


def run_pair(setup: Setup, first: list[str], second: list[str], work: Path) -> float:
    """Start side a's and side b's commands together; the wall time until both have exited."""
    began = time.perf_counter()
    processes = []
    try:
        for side, argv in (("a", first), ("b", second)):
            with (work / f"{side}.log").open("w") as output:
                processes.append(
                    subprocess.Popen(
                        setup.place(side, argv), cwd=REPO, stdout=output, stderr=subprocess.STDOUT, env=setup.env(side)
                    )
                )
    except BaseException:
        for process in processes:
            process.kill()
            process.wait()
        raise
    wait_all(processes, f"a worker (logs in {work})")
    return time.perf_counter() - began


def data_parallel(setup: Setup, args: argparse.Namespace, work: Path) -> Timing:
    config = TrainConfig(
        preset=args.preset,
        workers=2,
        inner_steps=args.inner_steps,
        rounds=args.steps // args.inner_steps,
        batch_size=args.batch_size,
        seq_len=args.seq_len,
    )
    master, out = f"{setup.host}:{PORT if setup.name == 'slow link' else free_ports(1)[0]}", work / "dp.json"
    wall = run_pair(setup, rank_command(0, config, master, out), rank_command(1, config, master, out), work)
    result = json.loads(out.read_text())
    return Timing(wall, result["train_s"], result["curve"][-1][1])


def diloco(setup: Setup, args: argparse.Namespace, work: Path) -> Timing:
    port = PORT if setup.name == "slow link" else free_ports(1)[0]
    launcher = [
        sys.executable,
        "-m",
        "gonkad",
        "train",
        "--out",
        str(work / "run"),
        "--workers",
        "2",
        "--local-workers",
        "1",
        "--rendezvous",
        f"{setup.host}:{port}",
        "--inner-steps",
        str(args.inner_steps),
        "--rounds",
        str(args.steps // args.inner_steps),
        "--compression",
        args.compression,
        "--preset",
        args.preset,
        "--batch-size",
        str(args.batch_size),
        "--seq-len",
        str(args.seq_len),
        "--threads",
        "1",
    ]
    joiner = [
        sys.executable,
        "-m",
        "gonkad",
        "train",
        "--join",
        f"{setup.host}:{port}",
        "--worker-name",
        "worker1",
        "--out",
        str(work / "joined"),
        "--threads",
        "1",
    ]
    wall = run_pair(setup, launcher, joiner, work)
    events = read_events(work / "run" / "metrics.jsonl")
    rounds = [e for e in events if e["event"] == "round"]
    last = [e for e in events if e["event"] == "checkpoint"][-1]
    return Timing(wall, last["time_s"] - (rounds[0]["time_s"] - rounds[0]["seconds"]), last["val_loss"])


def measure(
    method: Callable[[Setup, argparse.Namespace, Path], Timing], setup: Setup, args: argparse.Namespace
) -> list[Timing]:
    timings = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench_slowlink_") as work:
            timings.append(method(setup, args, Path(work)))
        log(
            f"{method.__name__} over {setup.name} #{repeat + 1}: wall {timings[-1].wall_s:.1f} s, "
            f"training {timings[-1].train_s:.1f} s, val loss {timings[-1].val_loss:.4f}"
        )
    return timings


def report(rows: dict[tuple[str, str], list[Timing]], args: argparse.Namespace, dropped: int) -> str:
    def median(key: tuple[str, str], field: str) -> float:
        return statistics.median(getattr(t, field) for t in rows[key])

    lines = [
        f"## DiLoCo against data-parallel over a slow link (2 workers, preset {args.preset}, "
        f"{args.steps} steps per worker)",
        "",
        f"Generated by `bench/bench_slowlink.py --steps {args.steps} --repeats {args.repeats}` on "
        f"{os.cpu_count()} CPU cores (1 torch thread per worker). Link: {args.rate_mbit:g} Mbit/s each way, "
        f"{args.rtt_ms:g} ms round trip, {args.queue_ms:g} ms tail-drop queue, MTU {args.mtu}, between two "
        f"network namespaces (`bench/slowlink.py`; {dropped} packets dropped by the queue over all slow-link "
        f"runs). DiLoCo: H = {args.inner_steps}, {args.compression}. Batch {args.batch_size} × seq "
        f"{args.seq_len}. Medians of {args.repeats} runs; training time is first step to last, evaluations "
        "included; wall is process start to exit.",
        "",
        "| method | link | training time | s per step | wall | val loss |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for method, link in rows:
        train = median((method, link), "train_s")
        lines.append(
            f"| {method} | {link} | {train:.1f} s | {train / args.steps:.3f} | "
            f"{median((method, link), 'wall_s'):.1f} s | {median((method, link), 'val_loss'):.4f} |"
        )
    lines.append("")
    for link in ("loopback", "slow link"):
        if ("data-parallel", link) in rows and ("DiLoCo", link) in rows:
            ratio = median(("data-parallel", link), "train_s") / median(("DiLoCo", link), "train_s")
            wall = median(("data-parallel", link), "wall_s") / median(("DiLoCo", link), "wall_s")
            lines.append(f"- {link}: DiLoCo trains {ratio:.2f}× faster than data-parallel ({wall:.2f}× end to end).")
    for method in ("data-parallel", "DiLoCo"):
        if (method, "loopback") in rows and (method, "slow link") in rows:
            slowdown = median((method, "slow link"), "train_s") / median((method, "loopback"), "train_s")
            lines.append(f"- {method} over the slow link takes {slowdown:.2f}× its loopback training time.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="steps per worker; a multiple of --inner-steps")
    parser.add_argument("--inner-steps", type=int, default=50, help="DiLoCo's H, and data-parallel's eval block")
    parser.add_argument("--compression", default="int8", choices=["fp32", "fp16", "int8"])
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--rate-mbit", type=float, default=100.0)
    parser.add_argument("--rtt-ms", type=float, default=50.0)
    parser.add_argument("--queue-ms", type=float, default=100.0)
    parser.add_argument("--mtu", type=int, default=9000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.steps % args.inner_steps:
        parser.error("--steps must be a multiple of --inner-steps")
    if os.geteuid() != 0:
        parser.error("needs root: it creates network namespaces and TUN devices")
    loopback = Setup("loopback", "127.0.0.1", lambda side, argv: argv, lambda side: dict(os.environ))
    rows: dict[tuple[str, str], list[Timing]] = {}
    with SlowLink(args.rate_mbit * 1e6, args.rtt_ms / 1000, args.queue_ms / 1000, args.mtu) as link:
        slow = Setup(
            "slow link",
            link.address("a"),
            link.command,
            lambda side: {**os.environ, "GLOO_SOCKET_IFNAME": link.device(side)},
        )
        for setup in (loopback, slow):
            rows[("data-parallel", setup.name)] = measure(data_parallel, setup, args)
            rows[("DiLoCo", setup.name)] = measure(diloco, setup, args)
            RESULTS.write_text(report(rows, args, link.dropped()))
        dropped = link.dropped()
    section = report(rows, args, dropped)
    RESULTS.write_text(section)
    print(section)


if __name__ == "__main__":
    main()
