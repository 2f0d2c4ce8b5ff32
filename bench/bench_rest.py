"""REST against gRPC: Query/Balance calls/s on one node, ``GET /cosmos/bank/v1beta1/balances/{addr}/by_denom``
against ``cosmos.bank.v1beta1.Query/Balance``, alternated on one 1-validator localnet.

Each run is bench_grpc.py's window (P spawned load processes, C calls in flight in all, a warm-up, then a
measured window; every reply checked against the faucet's genesis amount), once over gRPC (grpc.aio) and once
over REST (keep-alive HTTP/1.1 connections through sdk/http/upstream.py's small client, one per call in
flight), the order swapped each run. The ratio is REST's median over gRPC's; ``blocks`` is how many blocks the
chain made during the window and warm-up (queries must not hold up consensus).

    flock /tmp/gonka-bench.lock .venv/bin/python bench/bench_rest.py --runs 3 --duration 5 --concurrency 32 --procs 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grpc import (  # noqa: E402
    CALL_TIMEOUT_S,
    MAX_ERROR_SAMPLES,
    genesis_balance,
    load_arguments,
    row,
    run_once,
)

from gonkad import localnet  # noqa: E402
from sdk.client.rpc import CometRPC  # noqa: E402
from sdk.client.txbuilder import address_of  # noqa: E402
from sdk.http.upstream import Pool, UpstreamError  # noqa: E402

DENOM = "ngonka"


async def drive_rest(url: str, faucet: str, expected: str, in_flight: int, ready: Any, window: Any) -> dict[str, Any]:
    """bench_grpc.drive over REST: ``in_flight`` call loops, each on its own keep-alive connection."""
    pool = Pool(url, connect_timeout_s=CALL_TIMEOUT_S, max_idle=in_flight)
    path = f"/cosmos/bank/v1beta1/balances/{faucet}/by_denom?denom={DENOM}"
    ready.put(os.getpid())
    start, end = await asyncio.get_running_loop().run_in_executor(None, window.get)
    latencies = array("d")
    errors: list[str] = []
    error_count = 0

    async def client() -> None:
        nonlocal error_count
        while (begin := time.monotonic()) < end:
            try:
                response = await pool.request("GET", path, timeout_s=CALL_TIMEOUT_S)
                body = await response.read()
                coin = json.loads(body).get("balance") or {}
                ok = response.status == 200 and (coin.get("denom"), coin.get("amount")) == (DENOM, expected)
                problem = None if ok else f"{response.status}: {body[:200]!r}"
            except UpstreamError as err:
                problem = str(err)
            done = time.monotonic()
            if problem is not None:
                error_count += 1
                if len(errors) < MAX_ERROR_SAMPLES:
                    errors.append(problem)
            elif start <= done <= end:
                latencies.append(done - begin)

    await asyncio.gather(*(client() for _ in range(in_flight)))
    pool.close()
    return {"latencies": latencies.tobytes(), "error_count": error_count, "errors": errors}


def rest_worker(
    url: str, faucet: str, expected: str, in_flight: int, channels: int, ready: Any, window: Any, results: Any
) -> None:
    """bench_grpc.worker's arguments; ``channels`` does not apply (one connection per call in flight)."""
    results.put(asyncio.run(drive_rest(url, faucet, expected, in_flight, ready, window)))


def run_localnet(args: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        try:
            localnet.start(root, 1, "bench")
            localnet.wait_for_height(root, 2, 120)
            node = localnet.status(root)["nodes"][0]
            home = Path(node["home"])
            faucet = address_of(localnet.load_key(root, "faucet"))
            expected = genesis_balance(home, faucet)
            pids = {name: localnet.live_pid(localnet.pid_file(home, name), name) for name in ("gonkad", "cometbft")}
            node_pids = {name: pid for name, pid in pids.items() if pid is not None}
            window = (node_pids, args.procs, args.concurrency, args.channels, args.warmup, args.duration)
            runs: dict[str, list[dict[str, float]]] = {"grpc": [], "rest": []}
            rpc = CometRPC(node["rpc"])
            for i in range(args.runs):
                for kind in ("grpc", "rest") if i % 2 == 0 else ("rest", "grpc"):
                    before = int(rpc.status()["sync_info"]["latest_block_height"])
                    if kind == "grpc":
                        result = run_once(node["grpc"], faucet, expected, *window)
                    else:
                        result = run_once(node["api"], faucet, expected, *window, target=rest_worker)
                    after = int(rpc.status()["sync_info"]["latest_block_height"])
                    runs[kind].append({**result, "blocks": after - before})
            return runs
        finally:
            localnet.stop(root)


def main() -> None:
    args = load_arguments(__doc__.splitlines()[0], duration=5.0, warmup=1.0, concurrency=32, procs=2, channels=2)
    runs = run_localnet(args)
    print(f"command: {shlex.join(sys.orig_argv)}")
    print(
        f"Query/Balance, 1 validator, {args.concurrency} in flight = {args.procs} processes, gRPC and REST "
        f"alternated, {args.warmup:g} s warm-up + {args.duration:g} s measured, {os.cpu_count()} CPUs\n"
    )
    print(
        "| run | calls | calls/s | p50 ms | p99 ms | gonkad CPU s | cometbft CPU s | clients CPU s | blocks |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    medians = {}
    for kind, results in runs.items():
        medians[kind] = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(row(f"{kind} median", medians[kind]) + f" {medians[kind]['blocks']:.0f} |")
        for i, r in enumerate(results, 1):
            print(row(f"{kind} {i}", r) + f" {r['blocks']} |")
    pairs = [rest["calls_per_s"] / grpc["calls_per_s"] for grpc, rest in zip(runs["grpc"], runs["rest"], strict=True)]
    ratio = medians["rest"]["calls_per_s"] / medians["grpc"]["calls_per_s"]
    print(f"\nREST/gRPC calls/s: {ratio:.2f} (medians); per run pair: {', '.join(f'{p:.2f}' for p in pairs)}")


if __name__ == "__main__":
    main()
