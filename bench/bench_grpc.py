"""gRPC query throughput: cosmos.bank.v1beta1.Query/Balance against a real 1-validator localnet.

Builds a localnet in a temp folder, then per run spawns P load processes (separate from the node's), each
driving C/P concurrent in-flight calls over grpc.aio, and asks the faucet's ngonka balance for a warm-up
and then a fixed window. Every reply is checked against the faucet's amount in genesis.json; any error
fails the run. Calls/s = calls completed in the window / window; latency is per call, measured in the client.

    .venv/bin/python bench/bench_grpc.py --runs 3 --duration 10 --warmup 2 --concurrency 64 --procs 4 --channels 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import queue
import shlex
import signal
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc  # noqa: E402
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2, query_pb2_grpc  # noqa: E402

from gonkad import localnet  # noqa: E402
from sdk.client.txbuilder import address_of  # noqa: E402

DENOM = "ngonka"
CALL_TIMEOUT_S = 10.0
SETUP_TIMEOUT_S = 60.0
MAX_ERROR_SAMPLES = 5
SPAWN = multiprocessing.get_context("spawn")  # no gRPC or asyncio state inherited by the workers


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(
    address: str, faucet: str, expected: str, in_flight: int, channels: int, ready: Any, window: Any
) -> dict[str, Any]:
    """Run ``in_flight`` call loops over ``channels`` channels until the window's end; keep the window's calls."""
    options = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel, not one shared
    chans = [grpc.aio.insecure_channel(address, options=options) for _ in range(channels)]
    await asyncio.wait_for(asyncio.gather(*(c.channel_ready() for c in chans)), SETUP_TIMEOUT_S)
    stubs = [query_pb2_grpc.QueryStub(c) for c in chans]
    request = query_pb2.QueryBalanceRequest(address=faucet, denom=DENOM)
    ready.put(os.getpid())
    start, end = await asyncio.get_running_loop().run_in_executor(None, window.get)
    latencies = array("d")
    errors: list[str] = []
    error_count = 0

    async def client(stub: query_pb2_grpc.QueryStub) -> None:
        nonlocal error_count
        while (begin := time.monotonic()) < end:
            try:
                coin = (await stub.Balance(request, timeout=CALL_TIMEOUT_S)).balance
                problem = None if (coin.denom, coin.amount) == (DENOM, expected) else f"got {coin.amount}{coin.denom}"
            except grpc.aio.AioRpcError as err:
                problem = f"{err.code().name}: {err.details()}"
            done = time.monotonic()
            if problem is not None:
                error_count += 1
                if len(errors) < MAX_ERROR_SAMPLES:
                    errors.append(problem)
            elif start <= done <= end:
                latencies.append(done - begin)

    await asyncio.gather(*(client(stubs[i % channels]) for i in range(in_flight)))
    for c in chans:
        await c.close()
    return {"latencies": latencies.tobytes(), "error_count": error_count, "errors": errors}


def worker(
    address: str, faucet: str, expected: str, in_flight: int, channels: int, ready: Any, window: Any, results: Any
) -> None:
    results.put(asyncio.run(drive(address, faucet, expected, in_flight, channels, ready, window)))


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(int(len(ordered) * fraction), len(ordered) - 1)]


def collect(source: Any, workers: list[SpawnProcess]) -> list[Any]:
    """One item from each worker, failing as soon as a worker has died instead of waiting out the timeout."""
    items: list[Any] = []
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while len(items) < len(workers):
        try:
            items.append(source.get(timeout=0.5))
        except queue.Empty:
            if any(w.exitcode not in (None, 0) for w in workers) or time.monotonic() > deadline:
                codes = [w.exitcode for w in workers]
                raise RuntimeError(f"load processes failed or hung; exit codes {codes}") from None
    return items


def run_once(
    address: str,
    faucet: str,
    expected: str,
    node_pids: dict[str, int],
    procs: int,
    concurrency: int,
    channels: int,
    warmup: float,
    duration: float,
    target: Callable[..., None] = worker,
) -> dict[str, float]:
    """One warm-up plus measured window with freshly spawned load processes, each running ``target`` (``worker``'s
    arguments; bench_rest.py passes its REST one)."""
    ready, window, results = SPAWN.Queue(), SPAWN.Queue(), SPAWN.Queue()
    shares = [concurrency // procs + (i < concurrency % procs) for i in range(procs)]
    workers: list[SpawnProcess] = [
        SPAWN.Process(target=target, args=(address, faucet, expected, n, channels, ready, window, results), daemon=True)
        for n in shares
    ]
    try:
        for w in workers:
            w.start()
        collect(ready, workers)
        start = time.monotonic() + warmup
        end = start + duration
        for _ in workers:
            window.put((start, end))
        pids = node_pids | {f"client{i}": w.pid for i, w in enumerate(workers) if w.pid is not None}
        time.sleep(max(0.0, start - time.monotonic()))
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        time.sleep(max(0.0, end - time.monotonic()))
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
        replies = collect(results, workers)
        for w in workers:
            w.join(SETUP_TIMEOUT_S)
    finally:
        for w in workers:
            if w.is_alive():
                w.terminate()
    error_count = sum(r["error_count"] for r in replies)
    if error_count:
        samples = [e for r in replies for e in r["errors"]][:MAX_ERROR_SAMPLES]
        raise RuntimeError(f"{error_count} failed calls, e.g. {samples}")
    latencies: list[float] = []
    for r in replies:
        latencies.extend(array("d", r["latencies"]))
    latencies.sort()
    return {
        "calls": len(latencies),
        "calls_per_s": len(latencies) / duration,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "cpu_gonkad_s": cpu["gonkad"],
        "cpu_cometbft_s": cpu["cometbft"],
        "cpu_clients_s": sum(v for k, v in cpu.items() if k.startswith("client")),
    }


def genesis_balance(home: Path, address: str) -> str:
    """``address``'s DENOM amount in the node's genesis; no transaction is sent, so queries must return it."""
    app_state = json.loads((home / "config" / "genesis.json").read_text())["app_state"]
    (amount,) = (
        coin["amount"]
        for entry in app_state["bank"]["balances"]
        if entry["address"] == address
        for coin in entry["coins"]
        if coin["denom"] == DENOM
    )
    return str(amount)


def run_localnet(
    runs: int, procs: int, concurrency: int, channels: int, warmup: float, duration: float
) -> list[dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        try:
            localnet.start(root, 1, "bench")
            localnet.wait_for_height(root, 2, 120)
            node = localnet.status(root)["nodes"][0]
            faucet = address_of(localnet.load_key(root, "faucet"))
            expected = genesis_balance(Path(node["home"]), faucet)
            node_pids: dict[str, int] = {}
            for name in ("gonkad", "cometbft"):
                pid = localnet.live_pid(localnet.pid_file(Path(node["home"]), name), name)
                if pid is None:
                    raise RuntimeError(f"{name} of {node['name']} is not running")
                node_pids[name] = pid
            return [
                run_once(node["grpc"], faucet, expected, node_pids, procs, concurrency, channels, warmup, duration)
                for _ in range(runs)
            ]
        finally:
            localnet.stop(root)


def row(label: str, r: dict[str, float]) -> str:
    return (
        f"| {label} | {r['calls']:.0f} | {r['calls_per_s']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
        f"{r['cpu_gonkad_s']:.1f} | {r['cpu_cometbft_s']:.1f} | {r['cpu_clients_s']:.1f} |"
    )


def load_arguments(
    description: str, duration: float, warmup: float, concurrency: int, procs: int, channels: int
) -> argparse.Namespace:
    """The load's options, shared with bench_rest.py: runs, window, calls in flight, load processes, channels."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the localnet
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=duration, help="measured seconds per window")
    parser.add_argument("--warmup", type=float, default=warmup, help="seconds of load before each measured window")
    parser.add_argument("--concurrency", type=int, default=concurrency, help="concurrent in-flight calls in all")
    parser.add_argument("--procs", type=int, default=procs, help="load processes sharing the concurrency")
    parser.add_argument("--channels", type=int, default=channels, help="gRPC channels (TCP connections) per process")
    args = parser.parse_args()
    if not 1 <= args.procs <= args.concurrency:
        parser.error("--procs must be between 1 and --concurrency")
    return args


def main() -> None:
    args = load_arguments(__doc__.splitlines()[0], duration=10.0, warmup=2.0, concurrency=64, procs=4, channels=4)
    runs = run_localnet(args.runs, args.procs, args.concurrency, args.channels, args.warmup, args.duration)
    print(f"command: {shlex.join(sys.orig_argv)}")
    print(
        f"Query/Balance, 1 validator, {args.concurrency} in flight = {args.procs} processes x grpc.aio "
        f"({args.channels} channel(s) each), {args.warmup:g} s warm-up + {args.duration:g} s measured, "
        f"{os.cpu_count()} CPUs\n"
    )
    print(
        "| run | calls | calls/s | p50 ms | p99 ms | gonkad CPU s | cometbft CPU s | clients CPU s |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    print(row("median", {key: statistics.median(r[key] for r in runs) for key in runs[0]}))
    for i, r in enumerate(runs, 1):
        print(row(str(i), r))


if __name__ == "__main__":
    main()
