"""Transfer Agent overhead: added latency (p50/p99) and the most requests per second it passes on, beside a
LiteLLM proxy over the same backend.

Processes on loopback: a fast fake ML node (``tests/agent_fakes.FakeNode``, no delay, uvicorn), the TA
(``agent.server.Agent`` under uvicorn, one worker, a scripted in-memory ChainView that funds the requester
and records every start), with ``--litellm`` a LiteLLM proxy (one worker, the fake node as an OpenAI-compatible
model, a fixed master key, no database, no logging; run from its own venv, ``bench/requirements-litellm.txt``,
``make bench-litellm``) and this load generator. Every request through the TA is a real signed request (a fresh
timestamp each, so none is a replay): the TA checks the signature, the window and the replay cache, the balance,
routes among the registered nodes, starts the inference on the (in-memory) chain and forwards the body.

Latency: one request at a time, ``--requests`` each way (to the node directly, through the TA, through
LiteLLM), the ways taking turns 100 requests at a time; added latency = percentile through the proxy − direct
percentile. Throughput: ``--concurrency`` connections for ``--seconds`` each way, in ``--rounds`` slices the ways
take in turn (so that the machine's drift weighs on all alike), answered requests per second (all must be 200),
with each proxy process's CPU time per request (from /proc) and the rate one core would sustain at that cost, a
figure that does not depend on what else runs. Requests are signed before the clock starts; the generator uses
the TA's own small HTTP client (``sdk.http.upstream``), which costs less than httpx, on the same machine, for every
target alike.

    .venv/bin/python bench/bench_agent.py [--requests 2000] [--concurrency 32] [--seconds 5] [--rounds 5]
        [--nodes 2] [--litellm [--litellm-venv .venv-litellm]]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import uvicorn  # noqa: E402

from agent.chain import Model, Node  # noqa: E402
from agent.config import AgentConfig  # noqa: E402
from agent.server import Agent  # noqa: E402
from sdk.client.signing import request_headers  # noqa: E402
from sdk.crypto import bech32, secp256k1  # noqa: E402
from sdk.http.asgi import uvicorn_config  # noqa: E402
from sdk.http.upstream import Pool  # noqa: E402

USER = secp256k1.PrivateKey(hashlib.sha256(b"bench-user").digest())
USER_ADDRESS = bech32.encode(secp256k1.address_bytes(USER.public_key))
TA_KEY = secp256k1.PrivateKey(hashlib.sha256(b"bench-ta").digest())
TA_ADDRESS = bech32.encode(secp256k1.address_bytes(TA_KEY.public_key))
BODY = json.dumps(
    {"model": "m1", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 16, "seed": 7}
).encode()
LITELLM_KEY = "sk-bench"
"""The proxy's fixed master key: auth on, checked against config alone (no database)."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve_forever(app: object) -> None:
    """Run ``app`` on a free port (the TA as ``sdk.http.asgi.uvicorn_config`` has it); print its URL first."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=2048)
    print(json.dumps({"url": f"http://127.0.0.1:{listener.getsockname()[1]}"}), flush=True)
    if isinstance(app, Agent):
        config = uvicorn_config(app, app.config.host, app.config.port)
    else:
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="uvloop",
            http="httptools",
            proxy_headers=False,
            backlog=2048,
        )
    uvicorn.Server(config).run(sockets=[listener])


def role_node() -> None:
    from agent_fakes import FakeNode

    serve_forever(FakeNode("bench", max_concurrency=1 << 20))


def role_ta(model: str, node_urls: list[str]) -> None:
    """The TA over an in-memory chain that registers ``model`` on every node in ``node_urls``."""
    from agent_fakes import ScriptedChain

    operators = [bech32.encode(hashlib.sha256(bytes([i])).digest()[:20]) for i in range(len(node_urls))]
    nodes = [Node(operators[i], f"n{i}", url, (model,), 1 << 30, 1 << 20, 10) for i, url in enumerate(node_urls)]
    chain = ScriptedChain([Model(model, 512, 1)], nodes, {USER_ADDRESS: 10**18})
    serve_forever(Agent(AgentConfig(key=TA_KEY, chain=chain, queue_bound=4096)))


class Processes:
    """Every process a benchmark starts, each in its own session, so that ``stop`` ends it and its children
    (LiteLLM's, an ML node's) even when the benchmark fails half-way."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Processes:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a SIGTERM (timeout's) stops them too
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def popen(self, command: list[str], **options: Any) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, cwd=ROOT, start_new_session=True, **options)
        self.started.append(process)
        return process

    def ready_line(self, name: str, command: list[str], timeout_s: float = 120.0) -> tuple[int, str]:
        """Start ``command``, which prints a JSON line with its ``url`` when it listens; (pid, url)."""
        process = self.popen(command, stdout=subprocess.PIPE)
        assert process.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            if line.startswith(b"{") and b'"url"' in line:
                return process.pid, json.loads(line)["url"]
        raise RuntimeError(f"the {name} did not start")

    def stop(self) -> None:
        """Last started first: the TA goes before its nodes (no failed polls logged on the way out)."""
        self.started.reverse()
        for process in self.started:
            signal_group(process, signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                signal_group(process, signal.SIGKILL)
                process.wait()
            signal_group(process, signal.SIGKILL)  # children that outlived their session leader
        self.started.clear()


def signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """``signum`` to the session ``process`` leads (itself and what it started), or to it alone if none."""
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        if process.poll() is None:
            process.send_signal(signum)


def start_role(processes: Processes, role: str, *args: str) -> tuple[int, str]:
    return processes.ready_line(role, [sys.executable, __file__, "--role", role, *args])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_litellm(processes: Processes, venv: Path, node_url: str, folder: Path) -> tuple[int, str]:
    """A LiteLLM proxy from ``venv`` with the fake node as model ``m1`` (``openai/m1`` at the node's /v1): one
    uvicorn worker (uvloop; httptools, as the TA, from the requirements), no database, the master key, no
    telemetry, no request logging, no access log, the model cost map read locally (nothing fetched)."""
    binary = venv / "bin" / "litellm"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: make bench-litellm creates it")
    config = {
        "model_list": [
            {
                "model_name": "m1",
                "litellm_params": {"model": "openai/m1", "api_base": f"{node_url}/v1", "api_key": "unused"},
            }
        ],
        "litellm_settings": {
            "set_verbose": False,
            "json_logs": False,
            "turn_off_message_logging": True,
            "callbacks": [],
            "success_callback": [],
            "failure_callback": [],
        },
        "general_settings": {"master_key": LITELLM_KEY, "disable_spend_logs": True, "disable_error_logs": True},
    }
    (folder / "litellm.yaml").write_text(json.dumps(config))  # JSON is YAML
    logging_config = {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"null": {"class": "logging.NullHandler"}},
        "loggers": {
            name: {"level": "WARNING", "handlers": ["null"], "propagate": False}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
    (folder / "logging.json").write_text(json.dumps(logging_config))
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_LOG="ERROR",
        NUM_WORKERS="1",
        LITELLM_MODE="PRODUCTION",
        DISABLE_ADMIN_UI="True",
    )
    with open(folder / "litellm.log", "wb") as errors:
        process = processes.popen(
            [
                str(binary),
                "--config",
                str(folder / "litellm.yaml"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--num_workers",
                "1",
                "--telemetry",
                "False",
                "--log_config",
                str(folder / "logging.json"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"LiteLLM exited with {process.returncode}: {(folder / 'litellm.log').read_text()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2) as answer:
                if answer.status == 200:
                    return process.pid, url
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"LiteLLM did not answer within 180 s: {(folder / 'litellm.log').read_text()[-2000:]}")


def signed(count: int, body: bytes = BODY) -> list[bytes]:
    """``count`` requests, each with its own timestamp (so its own inference id), as raw header blocks."""
    base = time.time_ns()
    out = []
    for i in range(count):
        headers = request_headers(USER, body, TA_ADDRESS, base + i)
        out.append("".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode())
    return out


@dataclass
class Target:
    """One way to the backend: where, the body, the header blocks that make ``count`` requests valid there
    (signed ones for the TA), and the process whose CPU the requests cost (None: not counted)."""

    name: str
    url: str
    headers: Callable[[int], list[bytes]]
    pid: int | None = None
    body: bytes = BODY
    pool: Pool = field(init=False)

    def __post_init__(self) -> None:
        self.pool = Pool(self.url, 5.0)


def unsigned(count: int) -> list[bytes]:
    return [b""] * count


def bearer(count: int) -> list[bytes]:
    return [f"authorization: Bearer {LITELLM_KEY}\r\n".encode()] * count


async def post(pool: Pool, body: bytes, extra: bytes) -> tuple[float, bytes]:
    started = time.perf_counter()
    response = await pool.request("POST", "/v1/chat/completions", body, extra_headers=extra)
    answer = await response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {answer[:300]!r}")
    return time.perf_counter() - started, answer


async def sequential(target: Target, count: int) -> list[float]:
    """Seconds each of ``count`` requests took, one at a time."""
    return [(await post(target.pool, target.body, extra))[0] for extra in target.headers(count)]


@dataclass
class Load:
    """What one target did under load, summed over its slices."""

    latencies: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    ran_out: bool = False

    def figures(self, counted: bool) -> dict[str, Any]:
        done = len(self.latencies)
        out: dict[str, Any] = {
            "rps": done / self.elapsed_s,
            "requests": done,
            "p50_ms": statistics.median(self.latencies) * 1000,
            "p99_ms": percentile(self.latencies, 0.99) * 1000,
            "ran_out_of_requests": self.ran_out,
        }
        if counted:
            out.update(
                cpu_us_per_request=self.cpu_s / done * 1e6,
                cpu_share_of_a_core=self.cpu_s / self.elapsed_s,
                capacity_rps_per_core=done / self.cpu_s if self.cpu_s else float("inf"),
            )
        return out


async def concurrent(target: Target, concurrency: int, seconds: float, count: int, load: Load) -> None:
    """``concurrency`` connections sending for ``seconds`` (at most ``count`` requests, prepared first), added
    to ``load``."""
    pending = target.headers(count)
    deadline = 0.0

    async def worker() -> None:
        while pending and time.perf_counter() < deadline:
            load.latencies.append((await post(target.pool, target.body, pending.pop()))[0])

    started = time.perf_counter()
    cpu_before = cpu_s(target.pid) if target.pid else 0.0
    deadline = started + seconds
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    load.elapsed_s += time.perf_counter() - started
    load.cpu_s += cpu_s(target.pid) - cpu_before if target.pid else 0.0
    load.ran_out = load.ran_out or not pending


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process and its live descendants have used so far (a proxy may serve
    from a child)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone meanwhile
        return 0.0
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            total += sum(cpu_s(int(child)) for child in task.read_text().split())
        except OSError:
            pass
    return total


def busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores, every process), from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def others_cores(since: tuple[float, float, float]) -> float:
    """Cores kept busy on average, since ``since`` (``noise_mark()``), by processes other than this benchmark
    and those it started: what else ran on the machine meanwhile."""
    wall, busy, own = since
    return ((busy_s() - busy) - (cpu_s(os.getpid()) - own)) / (time.monotonic() - wall)


def noise_mark() -> tuple[float, float, float]:
    return time.monotonic(), busy_s(), cpu_s(os.getpid())


async def measure(
    targets: list[Target],
    requests: int,
    concurrency: int,
    seconds: float,
    rounds: int,
    warm: int = 500,
    most_rps: int = 6000,
    turn: int = 100,
) -> dict[str, Any]:
    """Latency (``turn`` requests a target at a time: one at a time each way would keep every process
    waking from idle, which costs more than a busy path does), then throughput (``seconds`` a target, in
    ``rounds`` slices), the targets taking turns; the first target is the direct one. Each slice prepares its
    share of ``seconds`` × ``most_rps`` requests before its clock starts (signing takes time: no more than
    can be sent)."""
    mark = noise_mark()
    for target in targets:
        log(f"warming {target.name}: {warm} requests")
        await sequential(target, warm)
    log(f"latency: {requests} sequential requests each way, {turn} at a time in turn")
    times: list[list[float]] = [[] for _ in targets]
    for first in range(0, requests, turn):  # in turn, so that the machine's drift weighs on every way alike
        for target, spent in zip(targets, times):  # signed just before: well within the TA's window
            spent += await sequential(target, min(turn, requests - first))
    ms = 1000.0
    direct = times[0]
    result: dict[str, Any] = {}
    for index, (target, spent) in enumerate(zip(targets, times)):
        row: dict[str, Any] = {"p50_ms": statistics.median(spent) * ms, "p99_ms": percentile(spent, 0.99) * ms}
        if index > 0:
            row.update(
                added_p50_ms=(statistics.median(spent) - statistics.median(direct)) * ms,
                added_p99_ms=(percentile(spent, 0.99) - percentile(direct, 0.99)) * ms,
            )
        result[target.name] = row
    loads = [Load() for _ in targets]
    log(f"throughput: {concurrency} connections, {rounds} rounds of {seconds / rounds:.2f} s each way in turn")
    for _ in range(rounds):  # slices in turn, for the same reason
        for target, load in zip(targets, loads):
            await concurrent(target, concurrency, seconds / rounds, int(seconds / rounds * most_rps), load)
    for target, load in zip(targets, loads):
        result[target.name]["throughput"] = load.figures(target.pid is not None)
    result["other_processes_cores"] = others_cores(mark)
    return result


def ratios(result: dict[str, Any], over: str, under: str) -> dict[str, float]:
    """``over``/``under`` for the latency and throughput figures both have, from one run."""
    a, b = result[over], result[under]
    out = {
        key: a[key] / b[key]
        for key in ("p50_ms", "p99_ms", "added_p50_ms", "added_p99_ms")
        if key in a and key in b and b[key]
    }
    out["rps"] = a["throughput"]["rps"] / b["throughput"]["rps"]
    return out


def versions(
    python: Path | str = sys.executable, packages: tuple[str, ...] = ("uvicorn", "uvloop", "httptools")
) -> dict[str, str]:
    """The packages' versions as ``python`` (this venv's or LiteLLM's) has them, for the record."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "def version(p):\n"
        "    try:\n        return m.version(p)\n"
        "    except m.PackageNotFoundError:\n        return 'absent'\n"
        "print(json.dumps({p: version(p) for p in sys.argv[1:]}))"
    )
    return json.loads(
        subprocess.run([str(python), "-c", code, *packages], capture_output=True, text=True, check=True).stdout
    )


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=["node", "ta"])
    parser.add_argument("--model", default="m1", help="with --role ta: the model the nodes serve")
    parser.add_argument("urls", nargs="*")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5, help="throughput in this many slices a target, in turn")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--litellm", action="store_true", help="also through a LiteLLM proxy, side by side")
    parser.add_argument("--litellm-venv", type=Path, default=ROOT / ".venv-litellm")
    args = parser.parse_args()
    if args.role == "node":
        return role_node()
    if args.role == "ta":
        return role_ta(args.model, args.urls)
    with tempfile.TemporaryDirectory() as folder, Processes() as processes:  # stopped before the folder goes
        nodes = [start_role(processes, "node")[1] for _ in range(args.nodes)]
        ta_pid, ta_url = start_role(processes, "ta", *nodes)
        targets = [Target("direct", nodes[0], unsigned), Target("ta", ta_url, signed, ta_pid)]
        setup: dict[str, Any] = {"python": sys.version.split()[0], "versions": versions()}
        if args.litellm:
            litellm_pid, litellm_url = start_litellm(processes, args.litellm_venv, nodes[0], Path(folder))
            targets.append(Target("litellm", litellm_url, bearer, litellm_pid))
            setup["litellm_versions"] = versions(
                args.litellm_venv / "bin" / "python", ("litellm", "uvicorn", "uvloop", "httptools", "openai")
            )
        import uvloop

        result = uvloop.run(measure(targets, args.requests, args.concurrency, args.seconds, args.rounds))
        if args.litellm:
            result["ta_over_litellm"] = ratios(result, "ta", "litellm")
        print(
            json.dumps(
                rounded(
                    {
                        "nodes": args.nodes,
                        "concurrency": args.concurrency,
                        "seconds": args.seconds,
                        "rounds": args.rounds,
                        "requests": args.requests,
                        "load_average": os.getloadavg(),
                        **setup,
                        **result,
                    }
                ),
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
