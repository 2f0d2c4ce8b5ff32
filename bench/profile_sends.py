"""Where a bank send's CPU goes: gonkad sampled by py-spy and CometBFT by its own pprof, during the flood
``bench_tx.py`` measures, and CometBFT again under the same load with its kvstore app, side by side.

A 1-validator localnet (its settings, with CometBFT's ``pprof_laddr`` opened) takes N presigned async sends from
S threads; py-spy samples gonkad and ``/debug/pprof/profile`` CometBFT for the whole flood. Then the kvstore node
takes the same load (txs padded to a send's size). Out: ``gonkad-sends.svg``, ``cometbft-sends.svg``,
``cometbft-kvstore.svg`` (flame graphs), the py-spy raw stacks, and each process's CPU seconds. ``--writers S``
also samples, every S s, whether CometBFT's ABCI socket writers wait on gonkad's sockets (see ``sample_writers``).

    .venv/bin/python bench/profile_sends.py --out bench/profiles --txs 10000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tx import bank_send_size, fund, measure, presign, run_kvstore, sender_keys  # noqa: E402
from flamegraph import fold_pprof_traces, render_svg  # noqa: E402

from gonkad import localnet  # noqa: E402
from gonkad.config import edit_cometbft_config  # noqa: E402
from sdk.client.rpc import CometRPC  # noqa: E402

PY_SPY = Path(sys.executable).parent / "py-spy"


def fetch_pprof(port: int, seconds: int, out: Path) -> None:
    url = f"http://127.0.0.1:{port}/debug/pprof/profile?seconds={seconds}"
    with urllib.request.urlopen(url, timeout=seconds + 30) as reply:
        out.write_bytes(reply.read())


COUNTERS = (
    "cometbft_mempool_recheck_times",
    "cometbft_consensus_height",
    "cometbft_mempool_failed_txs",
    "cometbft_consensus_total_txs",
)


def sample_writers(pprof_port: int, abci_port: int, seconds: int, every: float) -> dict[str, object]:
    """Whether CometBFT's ABCI socket clients wait on a full socket: every ``every`` s, the states of their writer
    goroutines (``sendRequestsRoutine``; "write" when parked in a socket write), and the bytes queued unread on
    gonkad's end of its ABCI connections (``ss`` Recv-Q, with the socket's receive buffer size)."""
    samples, states, queued, rcvbuf = 0, Counter[str](), [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        url = f"http://127.0.0.1:{pprof_port}/debug/pprof/goroutine?debug=2"
        with urllib.request.urlopen(url, timeout=10) as reply:
            dump = reply.read().decode()
        for goroutine in dump.split("\n\n"):
            if "sendRequestsRoutine" in goroutine:
                states["write" if "waitWrite" in goroutine else goroutine.split("[", 1)[1].split("]", 1)[0]] += 1
        lines = subprocess.run(
            ["ss", "-tnmH", "state", "established", f"( sport = :{abci_port} )"], capture_output=True, text=True
        ).stdout.splitlines()
        for line in lines:
            if line and line[0].isdigit():
                queued.append(int(line.split()[0]))
            elif "skmem:(" in line:
                rcvbuf.append(int(line.split("rb", 1)[1].split(",", 1)[0]))
        samples += 1
        time.sleep(every)
    return {
        "samples": samples,
        "writer_states": dict(states),
        "abci_recv_q_max": max(queued, default=0),
        "abci_recv_q_mean": sum(queued) / max(len(queued), 1),
        "abci_rcvbuf_max": max(rcvbuf, default=0),
    }


def cometbft_counters(port: int) -> dict[str, float]:
    """The node's Prometheus counters that explain its work: rechecks, blocks, refused txs."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in COUNTERS:
            values[name] = values.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return values


def top_frames(folded: Counter[str], count: int = 15) -> list[tuple[str, float]]:
    """The leaf frames with the largest self time, as shares of all samples."""
    leaves: Counter[str] = Counter()
    for stack, weight in folded.items():
        leaves[stack.rsplit(";", 1)[-1]] += weight
    total = sum(leaves.values()) or 1
    return [(name, 100.0 * w / total) for name, w in leaves.most_common(count)]


def pprof_svg(profile: Path, svg: Path, title: str) -> list[tuple[str, float]]:
    traces = subprocess.run(["go", "tool", "pprof", "-traces", str(profile)], capture_output=True, text=True)
    folded = fold_pprof_traces(traces.stdout)
    svg.write_text(render_svg(folded, title))
    return top_frames(folded)


def profile_gonka(out: Path, total: int, senders: int, seconds: int, writers: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        spec = localnet.build(root, 1, "bench")
        node = spec.nodes[0]
        pprof_port, metrics_port = localnet.free_ports(2)
        edit_cometbft_config(
            Path(node.home),
            {
                "rpc": {"pprof_laddr": f"127.0.0.1:{pprof_port}"},
                "instrumentation": {"prometheus": True, "prometheus_listen_addr": f"127.0.0.1:{metrics_port}"},
            },
        )
        try:
            localnet.start(root)
            localnet.wait_for_height(root, 2, 120)
            rpc = CometRPC(node.rpc)
            keys = sender_keys(senders)
            batches = presign(keys, "bench", fund(root, rpc, keys), total // senders)
            pids = {n: localnet.live_pid(localnet.pid_file(Path(node.home), n), n) for n in ("gonkad", "cometbft")}
            spy = subprocess.Popen(
                [str(PY_SPY), "record", "--pid", str(pids["gonkad"]), "--rate", "200", "--duration", str(seconds),
                 "--format", "raw", "--output", str(out / "gonkad-sends.txt"), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            fetcher = threading.Thread(target=fetch_pprof, args=(pprof_port, seconds, out / "cometbft-sends.pprof"))
            fetcher.start()
            sampler = (
                ThreadPoolExecutor(1).submit(sample_writers, pprof_port, node.abci_port, seconds, writers)
                if writers
                else None
            )
            result = measure(rpc, [node.rpc_port], batches, "async", pids)  # type: ignore[arg-type]
            spy.wait()
            fetcher.join()
            sampled = sampler.result() if sampler else {}
            counters = cometbft_counters(metrics_port)
        finally:
            localnet.stop(root)
    folded: Counter[str] = Counter()
    for line in (out / "gonkad-sends.txt").read_text().splitlines():
        stack, _, weight = line.rpartition(" ")
        folded[stack] += int(weight)
    (out / "gonkad-sends.svg").write_text(render_svg(folded, f"gonkad during {total} async bank sends"))
    return {
        "measure": result,
        "cometbft_counters": counters,
        "abci_writers": sampled,
        "gonkad_top": top_frames(folded),
        "cometbft_top": pprof_svg(out / "cometbft-sends.pprof", out / "cometbft-sends.svg", "cometbft (gonkad app)"),
    }


def profile_kvstore(out: Path, total: int, senders: int, seconds: int) -> dict[str, object]:
    """The same flood on CometBFT's kvstore app (bench_tx's node), with pprof open."""
    (pprof_port,) = localnet.free_ports(1)

    def delayed_fetch() -> None:  # the node needs a moment to start and make height 2
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                fetch_pprof(pprof_port, seconds, out / "cometbft-kvstore.pprof")
                return
            except OSError:
                time.sleep(0.5)

    fetcher = threading.Thread(target=delayed_fetch)
    fetcher.start()
    try:
        pprof = {"rpc": {"pprof_laddr": f"127.0.0.1:{pprof_port}"}}
        result = run_kvstore(total, senders, "async", bank_send_size(), pprof)
    finally:
        fetcher.join()
    return {
        "measure": result,
        "cometbft_top": pprof_svg(out / "cometbft-kvstore.pprof", out / "cometbft-kvstore.svg", "cometbft (kvstore)"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("bench/profiles"))
    ap.add_argument("--txs", type=int, default=10_000)
    ap.add_argument("--senders", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=12, help="sampling window from the flood's start")
    ap.add_argument("--skip-kvstore", action="store_true")
    ap.add_argument(
        "--writers", type=float, default=0.0, metavar="S",
        help="every S s, sample CometBFT's ABCI writer goroutines and gonkad's socket queue (costs CometBFT CPU)",
    )  # fmt: skip
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"gonka": profile_gonka(args.out, args.txs, args.senders, args.seconds, args.writers)}
    if not args.skip_kvstore:
        report["kvstore"] = profile_kvstore(args.out, args.txs, args.senders, args.seconds)
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
