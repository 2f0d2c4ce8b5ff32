"""Transfer Agent overhead: added latency (p50/p99) and the most requests per second it passes on.

Three processes on loopback: a fast fake ML node (``tests/agent_fakes.FakeNode``, no delay, uvicorn), the TA
(``agent.server.Agent`` under uvicorn, one worker, a scripted in-memory ChainView that funds the requester
and records every start) and this load generator. Every request is a real signed request (a fresh timestamp
each, so none is a replay): the TA checks the signature, the window and the replay cache, the balance, routes
among the registered nodes, starts the inference on the (in-memory) chain and forwards the body.

Latency: one request at a time, ``--requests`` to the node directly and then through the TA; added latency =
TA percentile − direct percentile. Throughput: ``--concurrency`` connections for ``--seconds`` through the TA,
answered requests per second (all must be 200), with the TA process's CPU time per request (from /proc) and
the rate one core would sustain at that cost, a figure that does not depend on what else runs. Requests are signed before the clock starts; the generator
uses the TA's own small HTTP client (``agent.upstream``), which costs less than httpx, on the same machine.

    .venv/bin/python bench/bench_agent.py [--requests 2000] [--concurrency 32] [--seconds 5] [--nodes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import uvicorn  # noqa: E402

from agent.chain import Model, Node  # noqa: E402
from agent.server import Agent, AgentConfig, uvicorn_config  # noqa: E402
from agent.upstream import Pool  # noqa: E402
from sdk.client.signing import request_headers  # noqa: E402
from sdk.crypto import bech32, secp256k1  # noqa: E402

USER = secp256k1.PrivateKey(hashlib.sha256(b"bench-user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
TA_KEY = secp256k1.PrivateKey(hashlib.sha256(b"bench-ta").digest())
TA_ADDRESS = bech32.encode(secp256k1.address_bytes(TA_KEY.public_key))
BODY = json.dumps({"model": "m1", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 16,
                   "seed": 7}).encode()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve_forever(app: object) -> None:
    """Run ``app`` on a free port (the TA as ``agent.server.uvicorn_config`` has it); print its URL first."""
    import socket
    listener = socket.create_server(("127.0.0.1", 0), backlog=2048)
    print(json.dumps({"url": f"http://127.0.0.1:{listener.getsockname()[1]}"}), flush=True)
    if isinstance(app, Agent):
        config = uvicorn_config(app)
    else:
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", loop="uvloop",
                                http="httptools", proxy_headers=False, backlog=2048)
    uvicorn.Server(config).run(sockets=[listener])


def role_node() -> None:
    from agent_fakes import FakeNode
    serve_forever(FakeNode("bench", max_concurrency=1 << 20))


def role_ta(node_urls: list[str]) -> None:
    from agent_fakes import ScriptedChain
    operators = [bech32.encode(hashlib.sha256(bytes([i])).digest()[:20]) for i in range(len(node_urls))]
    nodes = [Node(operators[i], f"n{i}", url, ("m1",), 1 << 30, 1 << 20, 10) for i, url in enumerate(node_urls)]
    chain = ScriptedChain([Model("m1", 512, 1)], nodes, {USER_ADDRESS: 10**18})
    serve_forever(Agent(AgentConfig(key=TA_KEY, chain=chain, queue_bound=4096)))


def start(role: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen([sys.executable, __file__, "--role", role, *args], cwd=ROOT,
                               stdout=subprocess.PIPE)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError(f"the {role} did not start")
    return process, json.loads(line)["url"]


def signed(count: int) -> list[bytes]:
    """``count`` requests, each with its own timestamp (so its own inference id), as raw header blocks."""
    base = time.time_ns()
    out = []
    for i in range(count):
        headers = request_headers(USER, BODY, TA_ADDRESS, base + i)
        out.append("".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode())
    return out


async def post(pool: Pool, extra: bytes) -> float:
    started = time.perf_counter()
    response = await pool.request("POST", "/v1/chat/completions", BODY, extra_headers=extra)
    await response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}")
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(node_url: str, ta_url: str, requests: int, concurrency: int, seconds: float,
                  ta_pid: int) -> dict[str, float]:
    direct, through = Pool(node_url, 5.0), Pool(ta_url, 5.0)
    warm = signed(500)
    for extra in warm:
        await post(through, extra)
        await post(direct, b"")
    log(f"latency: {requests} sequential requests each way")
    direct_s = [await post(direct, b"") for _ in range(requests)]
    headers = signed(requests)
    through_s = [await post(through, extra) for extra in headers]
    expected = int(seconds * 6000)
    log(f"throughput: signing {expected} requests, then {concurrency} connections for {seconds} s")
    pending = signed(expected)
    done = 0
    deadline = 0.0

    async def worker() -> None:
        nonlocal done
        while pending and time.perf_counter() < deadline:
            await post(through, pending.pop())
            done += 1

    started = time.perf_counter()
    cpu_before = cpu_s(ta_pid)
    deadline = started + seconds
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    ta_cpu_s = cpu_s(ta_pid) - cpu_before
    ms = 1000.0
    return {"direct_p50_ms": statistics.median(direct_s) * ms, "direct_p99_ms": percentile(direct_s, 0.99) * ms,
            "ta_p50_ms": statistics.median(through_s) * ms, "ta_p99_ms": percentile(through_s, 0.99) * ms,
            "added_p50_ms": (statistics.median(through_s) - statistics.median(direct_s)) * ms,
            "added_p99_ms": (percentile(through_s, 0.99) - percentile(direct_s, 0.99)) * ms,
            "throughput_rps": done / elapsed, "throughput_requests": done,
            "ta_cpu_us_per_request": ta_cpu_s / done * 1e6, "ta_cpu_share_of_a_core": ta_cpu_s / elapsed,
            "ta_capacity_rps_per_core": done / ta_cpu_s if ta_cpu_s else float("inf"),
            "ran_out_of_signed_requests": not pending}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=["node", "ta"])
    parser.add_argument("urls", nargs="*")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--nodes", type=int, default=1)
    args = parser.parse_args()
    if args.role == "node":
        return role_node()
    if args.role == "ta":
        return role_ta(args.urls)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        nodes = []
        for _ in range(args.nodes):
            process, url = start("node")
            processes.append(process)
            nodes.append(url)
        ta, ta_url = start("ta", *nodes)
        processes.append(ta)
        import uvloop
        result = uvloop.run(measure(nodes[0], ta_url, args.requests, args.concurrency, args.seconds, ta.pid))
        print(json.dumps({"nodes": args.nodes, "concurrency": args.concurrency, **{
            k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}}, indent=1))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
