"""ML node generation throughput and time to first token, through the real HTTP API.

Starts ``gonkad mlnode start --preset P --seed 1`` as a subprocess on a free loopback port, then for each
concurrency C runs C streaming chat completions at once with the official ``openai`` async client
(max_tokens fixed, seeded sampling, usage from ``stream_options.include_usage``). Per run: aggregate
tokens/s = completion tokens of all C requests / wall time of the run; time to first token (TTFT) = time
from sending a request to its first content chunk. Figures are medians over runs.

    .venv/bin/python bench/bench_mlnode.py --presets tiny base --concurrency 1 8 --runs 5 --max-tokens 128 [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from openai import AsyncOpenAI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gonkad.localnet import free_ports  # noqa: E402

READY_TIMEOUT_S = 120.0


def start_node(preset: str, port: int, max_concurrency: int, extra: list[str]) -> subprocess.Popen[bytes]:
    node = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/python"),
            "-m",
            "gonkad",
            "mlnode",
            "start",
            "--preset",
            preset,
            "--seed",
            "1",
            "--port",
            str(port),
            "--max-concurrency",
            str(max_concurrency),
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return node
        except httpx.HTTPError:
            time.sleep(0.3)
    node.kill()
    raise RuntimeError(f"ML node with preset {preset} did not become ready")


async def one_request(client: AsyncOpenAI, model: str, max_tokens: int, seed: int) -> tuple[float, int]:
    """(time to first token, completion tokens) of one streamed request."""
    started = time.perf_counter()
    first: float | None = None
    tokens = 0
    stream = await client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": f"Write a story number {seed}."}],
        max_tokens=max_tokens,
        temperature=1.0,
        seed=seed,
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - started
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    return (first if first is not None else time.perf_counter() - started), tokens


async def one_run(port: int, concurrency: int, max_tokens: int, run: int) -> tuple[float, float]:
    """(aggregate tokens/s, median TTFT in ms) of ``concurrency`` simultaneous requests."""
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="bench", max_retries=0, timeout=600)
    model = (await client.models.list()).data[0].id
    started = time.perf_counter()
    results = await asyncio.gather(
        *(one_request(client, model, max_tokens, 1000 * run + i) for i in range(concurrency))
    )
    wall = time.perf_counter() - started
    await client.close()
    return sum(t for _, t in results) / wall, 1000 * statistics.median(ttft for ttft, _ in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "base"])
    parser.add_argument("--concurrency", nargs="+", type=int, default=[1, 8])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, help="the node's torch threads (default: torch's choice)")
    args = parser.parse_args()
    rows = []
    for preset in args.presets:
        port = free_ports(1)[0]
        node = start_node(preset, port, max(args.concurrency), ["--threads", str(args.threads)] if args.threads else [])
        try:
            asyncio.run(one_run(port, 1, 8, run=0))  # warm-up
            for concurrency in args.concurrency:
                runs = [
                    asyncio.run(one_run(port, concurrency, args.max_tokens, run)) for run in range(1, args.runs + 1)
                ]
                rows.append(
                    {
                        "preset": preset,
                        "concurrency": concurrency,
                        "tokens_per_s": statistics.median(r[0] for r in runs),
                        "ttft_ms": statistics.median(r[1] for r in runs),
                        "runs_tokens_per_s": [round(r[0], 1) for r in runs],
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        finally:
            node.terminate()
            node.wait(timeout=30)
    print("| preset | concurrent requests | tokens/s (all requests) | TTFT ms (median) | runs tokens/s |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row['preset']} | {row['concurrency']} | {row['tokens_per_s']:.0f} | {row['ttft_ms']:.1f} | "
            f"{', '.join(map(str, row['runs_tokens_per_s']))} |"
        )


if __name__ == "__main__":
    main()
