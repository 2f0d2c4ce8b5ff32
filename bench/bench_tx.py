"""End-to-end bank-send throughput through CometBFT, and broadcast-to-commit latency.

Builds a localnet (1 or 4 validators) in a temp folder, funds S senders, pre-signs N MsgSend txs,
broadcasts them from S threads (one keep-alive HTTP connection each, broadcast_tx_sync or _async), and watches
blocks as they commit. Throughput = N / (last commit seen - first broadcast). With --kvstore, runs alternate with
the same load on CometBFT's built-in kvstore app (one validator, configured as the localnet's node): CometBFT's
own ceiling, and our median tx/s as a fraction of it. Each run also says how many of the N txs committed, and how
the flood stretched the blocks: the intervals between the block times (BFT time, from the headers) of the blocks
made during the flood (p50, max) against the median interval of the idle blocks just before it.

    .venv/bin/python bench/bench_tx.py --validators 1 --txs 10000 --senders 8
    .venv/bin/python bench/bench_tx.py --validators 1 --txs 10000 --runs 5 --mode async --kvstore  # or --only-kvstore
    .venv/bin/python bench/bench_tx.py --validators 1 --mode async --kvstore --kvstore-socket /path/to/abci-cli
    .venv/bin/python bench/bench_tx.py --profile     # per-tx CheckTx / FinalizeBlock cost, in process
    .venv/bin/python bench/bench_tx.py --store-share 300   # the store's part of a block of 300 sends, in process
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import http.client
import json
import os
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2  # noqa: E402
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402

from app import GonkaApp  # noqa: E402
from gonkad import genesis, localnet  # noqa: E402
from gonkad.config import edit_cometbft_config  # noqa: E402
from gonkad.paths import cometbft_binary  # noqa: E402
from sdk.client.rpc import CometRPC, RPCError  # noqa: E402
from sdk.client.txbuilder import address_of, query_account, send_msg, sign_tx  # noqa: E402
from sdk.coins import Coins, parse_coins  # noqa: E402
from sdk.crypto import secp256k1  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402
from sdk.tx import tx_hash  # noqa: E402

FEE = parse_coins("10ngonka")
GAS = 100_000


def sender_keys(count: int) -> list[secp256k1.PrivateKey]:
    return [secp256k1.PrivateKey((1000 + i).to_bytes(32, "big")) for i in range(count)]


def presign(keys: list[secp256k1.PrivateKey], chain_id: str, numbers: list[int], per_sender: int) -> list[list[bytes]]:
    recipient = address_of(secp256k1.PrivateKey(b"\x77" * 32))
    return [
        [
            sign_tx(
                key, [send_msg(address_of(key), recipient, Coins((("ngonka", 1),)))], chain_id, number, seq, FEE, GAS
            )
            for seq in range(per_sender)
        ]
        for key, number in zip(keys, numbers)
    ]


def fund(root: Path, rpc: CometRPC, keys: list[secp256k1.PrivateKey]) -> list[int]:
    """One MultiSend from the faucet; returns the senders' account numbers once committed."""
    faucet = localnet.load_key(root, "faucet")
    chain_id = localnet.load(root).chain_id
    each = Coins((("ngonka", 10**12),))
    msg = bank_tx.MsgMultiSend(
        inputs=[bank_pb2.Input(address=address_of(faucet), coins=Coins((("ngonka", 10**12 * len(keys)),)).to_proto())],
        outputs=[bank_pb2.Output(address=address_of(k), coins=each.to_proto()) for k in keys],
    )
    account = query_account(rpc, address_of(faucet))
    raw = sign_tx(faucet, [msg], chain_id, account.account_number, account.sequence, FEE, 2_000_000)
    assert rpc.broadcast_tx_sync(raw)["code"] == 0
    deadline = time.monotonic() + 60
    while True:
        try:
            return [query_account(rpc, address_of(k)).account_number for k in keys]
        except Exception:  # noqa: BLE001 - not committed yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def broadcaster(port: int, txs: list[bytes], sent_at: dict[bytes, float], rejected: list[str], mode: str) -> None:
    """One keep-alive connection, one broadcast per request, in sequence order."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for raw in txs:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": f"broadcast_tx_{mode}",
                "params": {"tx": base64.b64encode(raw).decode()},
            }
        )
        sent_at[tx_hash(raw)] = time.perf_counter()
        conn.request("POST", "/", body, {"Content-Type": "application/json"})
        reply = json.loads(conn.getresponse().read())
        result = reply.get("result") or {}
        if reply.get("error") or result.get("code"):
            rejected.append(str(reply.get("error") or result.get("log")))
    conn.close()


def block_time_s(header: Mapping[str, str]) -> float:
    """A block header's ``time`` (RFC 3339, nanoseconds) in seconds since the epoch."""
    whole, _, fraction = header["time"].rstrip("Z").partition(".")
    return datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp() + float(f"0.{fraction or 0}")


def block_intervals(rpc: CometRPC, first: int, last: int) -> list[tuple[float, int]]:
    """For each block after ``first`` up to ``last``: seconds since the block before it, and its txs."""
    blocks = [rpc.block(h)["block"] for h in range(first, last + 1)]
    times = [block_time_s(b["header"]) for b in blocks]
    return [(t - before, len(b["data"]["txs"] or [])) for before, t, b in zip(times, times[1:], blocks[1:])]


def idle_interval(rpc: CometRPC, blocks: int = 6) -> float:
    """The median interval of the next ``blocks`` blocks, on a network nothing is sent to."""
    start = rpc.height()
    while rpc.height() < start + blocks:
        time.sleep(0.05)
    return statistics.median(interval for interval, _ in block_intervals(rpc, start, start + blocks))


def watch(
    rpc: CometRPC,
    start_height: int,
    wanted: set[bytes],
    committed_at: dict[bytes, float],
    failed: list[str],
    last_height: list[int],
) -> None:
    """Note when each of ``wanted`` commits (and ``last_height``, the block of the last), until all have or none
    has for 20 s."""
    height = start_height
    last_progress = time.monotonic()
    while len(committed_at) < len(wanted) and time.monotonic() - last_progress < 20:
        if rpc.height() <= height:
            time.sleep(0.02)
            continue
        height += 1
        seen = time.perf_counter()
        txs = rpc.block(height)["block"]["data"]["txs"] or []
        results = rpc.block_results(height, timeout_s=120)  # a block of thousands of txs, on busy cores
        for raw_b64, result in zip(txs, results):
            h = tx_hash(base64.b64decode(raw_b64))
            if h in wanted:
                committed_at[h] = seen
                last_height[:] = [height]
                last_progress = time.monotonic()  # a tx lost in the mempool ends the wait 20 s after the last of ours
                if int(result.get("code", 0)):
                    failed.append(result.get("log", ""))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    rpc: CometRPC, ports: list[int], batches: list[list[bytes]], mode: str, pids: dict[str, int]
) -> dict[str, float]:
    """Broadcast each batch from its own thread (ports taken in turn) while watching commits through ``rpc``: one
    load for either app, so their numbers compare. CPU seconds of ``pids`` and of this client over the load; the
    block intervals of the flood against the idle ones before it; how many txs committed (rejected or failed ones
    are printed, and count as not committed)."""
    idle = idle_interval(rpc)
    wanted = {tx_hash(t) for batch in batches for t in batch}
    sent_at: dict[bytes, float] = {}
    committed_at: dict[bytes, float] = {}
    rejected: list[str] = []
    failed: list[str] = []
    start_height, last_height = rpc.height(), [0]
    watcher = threading.Thread(target=watch, args=(rpc, start_height, wanted, committed_at, failed, last_height))
    watcher.start()
    threads = [
        threading.Thread(target=broadcaster, args=(ports[i % len(ports)], txs, sent_at, rejected, mode))
        for i, txs in enumerate(batches)
    ]
    cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()} | {"client": time.process_time()}
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    watcher.join()
    cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
    cpu["client"] = time.process_time() - cpu_before["client"]
    if rejected or failed:
        print(f"  rejected {len(rejected)}, failed {len(failed)}: {(rejected or failed)[:3]}", flush=True)
    committed = [h for h in wanted if h in committed_at]
    if not committed:
        raise RuntimeError(f"none of {len(wanted)} txs committed")
    blocks = block_intervals(rpc, start_height, last_height[0])
    print("  blocks of the flood, interval s (txs):", " ".join(f"{s:.2f}({n})" for s, n in blocks), flush=True)
    flood = [interval for interval, _ in blocks]
    first, last = min(sent_at.values()), max(committed_at.values())
    latencies = sorted(committed_at[h] - sent_at[h] for h in committed)
    return {
        "txs": len(wanted),
        "committed": len(committed) - len(failed),
        "tx_per_s": len(committed) / (last - first),
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "idle_s": idle,
        "flood_p50_s": statistics.median(flood),
        "flood_max_s": max(flood),
        "blocks": len(flood),
        **{f"cpu_{name}_s": seconds for name, seconds in cpu.items()},
        "wall_s": last - first,
    }


def row(r: Mapping[str, float]) -> str:
    """A run's cells: committed/total, tx/s, latency, and the block intervals (flood p50 and max, idle)."""
    return (
        f"{r['committed']}/{r['txs']} | {r['tx_per_s']:.0f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | "
        f"{r['blocks']} | {r['flood_p50_s']:.2f} | {r['flood_max_s']:.2f} | {r['idle_s']:.2f} | "
        f"{r['flood_max_s'] / r['idle_s']:.1f}"
    )


ROW_HEADER = "committed | tx/s | p50 ms | p99 ms | blocks | interval p50 s | interval max s | idle s | max/idle"


def run_localnet(validators: int, total: int, senders: int, mode: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        try:
            localnet.start(root, validators, "bench")
            localnet.wait_for_height(root, 2, 120)
            nodes = localnet.load(root).nodes
            rpc = CometRPC(nodes[0].rpc)
            keys = sender_keys(senders)
            numbers = fund(root, rpc, keys)
            batches = presign(keys, "bench", numbers, total // senders)
            pids = {
                name: localnet.live_pid(localnet.pid_file(Path(nodes[0].home), name), name)
                for name in ("gonkad", "cometbft")
            }
            return measure(rpc, [n.rpc_port for n in nodes], batches, mode, pids)
        finally:
            localnet.stop(root)


def bank_send_size() -> int:
    """Bytes of one presigned bank send, the size kvstore txs are padded to."""
    return len(presign(sender_keys(1), "bench", [1], 1)[0][0])


def kvstore_txs(total: int, senders: int, size: int) -> list[list[bytes]]:
    """Unique ``k<i>=v<i>`` txs, the value padded to ``size`` bytes, in batches as ``presign`` makes them."""
    per_sender = total // senders
    return [
        [f"k{i}=v{i}".ljust(size, "x").encode() for i in range(s * per_sender, (s + 1) * per_sender)]
        for s in range(senders)
    ]


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = 15.0) -> None:
    """SIGTERM to the process group, SIGKILL if it outlives the grace period; reaped."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()


def serve_kvstore(abci_cli: str, stack: contextlib.ExitStack) -> int:
    """Start ``abci-cli kvstore`` on a free port (stopped when ``stack`` closes); its port once it listens (CometBFT
    exits if its app is not there when it starts)."""
    (port,) = localnet.free_ports(1)
    server = subprocess.Popen(
        [abci_cli, "kvstore", "--address", f"tcp://127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stack.callback(server.wait)
    stack.callback(server.terminate)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return port
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"abci-cli kvstore did not listen on {port} (exit {server.returncode})") from None
            time.sleep(0.1)


def run_kvstore(
    total: int,
    senders: int,
    mode: str,
    size: int,
    extra_config: dict[str, dict[str, object]] | None = None,
    abci_cli: str | None = None,
) -> dict[str, float]:
    """CometBFT's ceiling: the built-in kvstore app (in memory, no signatures, no Merkle tree) on one validator
    whose config.toml and genesis consensus params are the 1-validator localnet's, so only the app differs
    (``extra_config``: more config.toml tables, e.g. a profiler's endpoint). With ``abci_cli`` (CometBFT's
    ``abci-cli`` binary) the same kvstore runs as its own process behind the ABCI socket, as gonkad does: what
    CometBFT's socket client costs with an app that answers at once."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        proxy_app = "kvstore"
        if abci_cli:
            proxy_app = f"tcp://127.0.0.1:{serve_kvstore(abci_cli, stack)}"
        home = Path(tmp) / "kvstore"
        subprocess.run([cometbft_binary(), "init", "--home", str(home)], check=True, capture_output=True)
        p2p_port, rpc_port = localnet.free_ports(2)
        node = localnet.NodeSpec(
            name="kvstore", home=str(home), p2p_port=p2p_port, rpc_port=rpc_port, abci_port=0, grpc_port=0, node_id=""
        )
        settings = localnet.load_settings(validators=1)
        config = localnet.consensus_settings(node, "", settings)
        del config[""]["proxy_app"]  # the app is --proxy_app
        for table, values in (extra_config or {}).items():
            config[table] = {**config.get(table, {}), **values}
        edit_cometbft_config(home, config)
        genesis_path = home / "config" / "genesis.json"
        doc = json.loads(genesis_path.read_text())
        doc["consensus_params"] = genesis.merge_overrides(doc["consensus_params"], settings.consensus_params)
        genesis_path.write_text(json.dumps(doc, indent=2) + "\n")
        with (home / "cometbft.log").open("wb") as logfile:
            proc = subprocess.Popen(
                [cometbft_binary(), "start", "--home", str(home), f"--proxy_app={proxy_app}"],
                stdout=logfile,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            rpc = CometRPC(node.rpc)
            deadline = time.monotonic() + 60
            while True:  # height 2, as the localnet is waited for
                try:
                    if rpc.height() >= 2:
                        break
                except RPCError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"kvstore node made no blocks (exit {proc.returncode}); see its log:\n"
                        f"{(home / 'cometbft.log').read_text()[-2000:]}"
                    )
                time.sleep(0.2)
            return measure(rpc, [rpc_port], kvstore_txs(total, senders, size), mode, {"cometbft": proc.pid})
        finally:
            stop_group(proc)


def compare(total: int, senders: int, runs: int, mode: str, with_gonka: bool, abci_cli: str | None) -> None:
    """Gonka (1 validator) and kvstore runs alternated, so both see the machine in the same state; each run,
    then the medians and their ratio."""
    size = bank_send_size()
    apps: dict[str, Callable[[], dict[str, float]]] = {}
    if with_gonka:
        apps["gonka"] = lambda: run_localnet(1, total, senders, mode)
    apps["kvstore"] = lambda: run_kvstore(total, senders, mode, size)
    if abci_cli:
        apps["kvstore-socket"] = lambda: run_kvstore(total, senders, mode, size, abci_cli=abci_cli)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in apps}
    print(
        f"kvstore txs padded to {size} bytes (one bank send), mode {mode}\n"
        f"| run | app | {ROW_HEADER} |\n|---|---|{'---|' * 9}"
    )
    for i in range(runs):
        for name, run in apps.items():
            r = run()
            results[name].append(r)
            print(f"| {i + 1} | {name} | {row(r)} |", flush=True)
    medians = {name: statistics.median(r["tx_per_s"] for r in rs) for name, rs in results.items()}
    for name, rs in results.items():
        print(
            f"{name}: median {medians[name]:.0f} tx/s over {len(rs)} runs; node CPU seconds in the last run:",
            {k: round(v, 1) for k, v in rs[-1].items() if k.startswith(("cpu", "wall"))},
        )
    if with_gonka:
        print(f"gonka/kvstore: {medians['gonka'] / medians['kvstore']:.3f}")
        if abci_cli:
            print(f"gonka/kvstore-socket: {medians['gonka'] / medians['kvstore-socket']:.3f}")


def in_process_app(
    tmp: str,
    keys: list[secp256k1.PrivateKey],
    store: type[CommitStore] = CommitStore,
    index_events: frozenset[str] = frozenset(),
) -> GonkaApp:
    """An app at height 1 in ``tmp`` with ``keys`` funded at genesis (account numbers 0, 1, ...)."""
    app = GonkaApp(store(str(Path(tmp) / "db")), index_events=index_events)
    state = genesis.default_app_state()
    for key in keys:
        state = genesis.add_genesis_account(state, address_of(key), [("ngonka", 10**15)])
    app.init_chain(
        abci.RequestInitChain(chain_id="bench", initial_height=1, app_state_bytes=json.dumps(state).encode())
    )
    app.finalize_block(abci.RequestFinalizeBlock(height=1))
    app.commit(abci.RequestCommit())
    return app


class TimedStore(CommitStore):
    """A CommitStore that adds the seconds its ``apply`` and ``commit`` take to ``spent``."""

    spent = 0.0

    def apply(self, changes: Mapping[bytes, bytes | None]) -> bytes:
        start = time.perf_counter()
        try:
            return super().apply(changes)
        finally:
            TimedStore.spent += time.perf_counter() - start

    def commit(self) -> int:
        start = time.perf_counter()
        try:
            return super().commit()
        finally:
            TimedStore.spent += time.perf_counter() - start


def store_share(per_block: int, blocks: int, new_recipients: bool) -> None:
    """The store's part (tree update and write) of FinalizeBlock + Commit for blocks of bank sends, in process:
    to the bench's one recipient, or each to a new account (more changed keys per block)."""
    keys = sender_keys(4)
    per_sender = per_block * blocks // len(keys)
    if new_recipients:
        signed = [
            [
                sign_tx(
                    key,
                    [
                        send_msg(
                            address_of(key),
                            address_of(secp256k1.PrivateKey((10**6 + i * per_sender + seq).to_bytes(32, "big"))),
                            Coins((("ngonka", 1),)),
                        )
                    ],
                    "bench",
                    i,
                    seq,
                    FEE,
                    GAS,
                )
                for seq in range(per_sender)
            ]
            for i, key in enumerate(keys)
        ]
    else:
        signed = presign(keys, "bench", list(range(len(keys))), per_sender)
    txs = [t for batch in zip(*signed) for t in batch]
    totals, shares = [], []
    with tempfile.TemporaryDirectory() as tmp:
        app = in_process_app(tmp, keys, TimedStore)
        for b in range(blocks):
            TimedStore.spent = 0.0
            start = time.perf_counter()
            response = app.finalize_block(
                abci.RequestFinalizeBlock(height=2 + b, txs=txs[b * per_block : (b + 1) * per_block])
            )
            app.commit(abci.RequestCommit())
            totals.append(time.perf_counter() - start)
            shares.append(TimedStore.spent / totals[-1])
            assert all(r.code == 0 for r in response.tx_results)
        app.store.close()
    total, share = statistics.median(totals), statistics.median(shares)
    print(
        f"{per_block} sends a block ({'a new recipient each' if new_recipients else 'one recipient'}): "
        f"FinalizeBlock + Commit {total * 1e3:.1f} ms, of which the store {share * total * 1e3:.1f} ms "
        f"({share:.1%}), medians of {blocks} blocks"
    )


def profile(count: int) -> None:
    """CheckTx and FinalizeBlock per tx in process, and the top costs of FinalizeBlock."""
    with tempfile.TemporaryDirectory() as tmp:
        keys = sender_keys(4)
        app = in_process_app(tmp, keys)
        signed = presign(keys, "bench", [0, 1, 2, 3], count // 2)
        half = count // 8
        txs = [t for batch in zip(*(b[:half] for b in signed)) for t in batch]
        profiled = [t for batch in zip(*(b[half:] for b in signed)) for t in batch]
        start = time.perf_counter()
        for raw in txs:
            assert app.check_tx(abci.RequestCheckTx(tx=raw)).code == 0
        check_us = (time.perf_counter() - start) / len(txs) * 1e6
        start = time.perf_counter()
        response = app.finalize_block(abci.RequestFinalizeBlock(height=2, txs=txs))
        finalize_us = (time.perf_counter() - start) / len(txs) * 1e6
        start = time.perf_counter()
        app.commit(abci.RequestCommit())
        commit_us = (time.perf_counter() - start) / len(txs) * 1e6
        assert all(r.code == 0 for r in response.tx_results)
        profiler = cProfile.Profile()
        profiler.enable()
        app.finalize_block(abci.RequestFinalizeBlock(height=3, txs=profiled))
        profiler.disable()
        app.store.close()
    print(
        f"| CheckTx | {check_us:.0f} µs/tx |\n| FinalizeBlock | {finalize_us:.0f} µs/tx |"
        f"\n| Commit | {commit_us:.1f} µs/tx |\nFinalizeBlock of a second block under cProfile:"
    )
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the localnet
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validators", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--txs", type=int, default=10_000)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mode", choices=["sync", "async"], default="sync", help="broadcast_tx_sync or _async")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--store-share",
        type=int,
        metavar="SENDS",
        default=0,
        help="in process: the store's part of blocks of SENDS bank sends (one recipient, then new ones)",
    )
    parser.add_argument(
        "--kvstore",
        action="store_true",
        help="alternate each run with one on CometBFT's kvstore app (needs --validators 1)",
    )
    parser.add_argument("--only-kvstore", action="store_true", help="the kvstore runs alone")
    parser.add_argument(
        "--kvstore-socket",
        metavar="ABCI_CLI",
        help="with --kvstore: also the kvstore behind the ABCI socket, served by this abci-cli binary",
    )
    args = parser.parse_args()
    if args.profile:
        profile(args.txs)
        return
    if args.store_share:
        store_share(args.store_share, 8, new_recipients=False)
        store_share(args.store_share, 8, new_recipients=True)
        return
    if args.kvstore or args.only_kvstore:
        if not args.only_kvstore and args.validators != [1]:
            parser.error("--kvstore compares with the 1-validator localnet: pass --validators 1")
        compare(args.txs, args.senders, args.runs, args.mode, not args.only_kvstore, args.kvstore_socket)
        return
    print(f"| validators | run | {ROW_HEADER} |\n|---|---|{'---|' * 9}")
    for validators in args.validators:
        runs = []
        for i in range(args.runs):
            runs.append(run_localnet(validators, args.txs, args.senders, args.mode))
            print(f"| {validators} | {i + 1} | {row(runs[-1])} |", flush=True)
        print(f"  median tx/s {statistics.median(r['tx_per_s'] for r in runs):.0f}")
        print(
            "  node0 CPU seconds in the last run:",
            {k: round(v, 1) for k, v in runs[-1].items() if k.startswith(("cpu", "wall"))},
        )


if __name__ == "__main__":
    main()
