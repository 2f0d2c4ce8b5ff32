"""Block rate of a 1-validator localnet, idle and while clients simulate a 3,000-message tx over gRPC.

Builds a localnet in a temp folder, signs one tx of 3,000 MsgSends from the faucet (each to a new
address), then alternates idle windows and loaded windows (C client threads, each with its own gRPC
channel, calling cosmos.tx.v1beta1.Service/Simulate back to back). Block rate = blocks / block time
between the first block of a window and its last, from CometBFT's /status. Prints the median of the
runs and every run, and what the simulations answered.

    .venv/bin/python bench/bench_simulate_load.py --runs 3 --window 20 --clients 8 --messages 3000
    .venv/bin/python bench/bench_simulate_load.py --simulation-gas-limit 1000000000   # in effect no cap
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc  # noqa: E402
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2, service_pb2_grpc  # noqa: E402

from bench.common import log  # noqa: E402
from gonkad import localnet  # noqa: E402
from gonkad.config import load_app_config, save_app_config  # noqa: E402
from sdk.client.rpc import CometRPC  # noqa: E402
from sdk.client.txbuilder import address_of, query_account, send_msg, sign_tx  # noqa: E402
from sdk.coins import Coins  # noqa: E402
from sdk.crypto import bech32  # noqa: E402

CALL_TIMEOUT_S = 120.0


def big_tx(root: Path, rpc: CometRPC, messages: int) -> bytes:
    """The faucet sends 1ngonka to each of ``messages`` new addresses, in one tx."""
    faucet = localnet.load_key(root, "faucet")
    sender = address_of(faucet)
    account = query_account(rpc, sender)
    coins = Coins((("ngonka", 1),))
    msgs = [send_msg(sender, bech32.encode((i + 1).to_bytes(20, "big")), coins) for i in range(messages)]
    return sign_tx(
        faucet, msgs, localnet.load(root).chain_id, account.account_number, account.sequence, gas_limit=100_000_000
    )


def block_time_s(status: dict) -> float:
    """CometBFT's RFC 3339 block time with nanoseconds, as seconds."""
    stamp = status["sync_info"]["latest_block_time"]
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole + "+00:00").timestamp() + float("0." + (fraction or "0"))


def next_block(rpc: CometRPC, after: int) -> tuple[int, float]:
    """Wait for a height above ``after``; its height and block time."""
    while True:
        status = rpc.status()
        height = int(status["sync_info"]["latest_block_height"])
        if height > after:
            return height, block_time_s(status)
        time.sleep(0.01)


def block_rate(rpc: CometRPC, window_s: float) -> float:
    """Blocks per second of block time, from the first block after now to the first after ``window_s``."""
    h0, t0 = next_block(rpc, rpc.height())
    time.sleep(window_s)
    h1, t1 = next_block(rpc, rpc.height())
    return (h1 - h0) / (t1 - t0)


def simulate_client(
    address: str, tx: bytes, stop: threading.Event, outcomes: Counter[str], latencies: list[float]
) -> None:
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 8 << 20)]) as channel:
        stub = service_pb2_grpc.ServiceStub(channel)
        request = service_pb2.SimulateRequest(tx_bytes=tx)
        while not stop.is_set():
            begin = time.monotonic()
            try:
                reply = stub.Simulate(request, timeout=CALL_TIMEOUT_S)
                outcome = f"ok ({reply.gas_info.gas_used} gas)"
            except grpc.RpcError as err:
                outcome = f"{err.code().name}: {(err.details() or '')[:90]}"
            latencies.append(time.monotonic() - begin)
            outcomes[outcome] += 1


def loaded_rate(
    rpc: CometRPC, grpc_address: str, tx: bytes, clients: int, window_s: float
) -> tuple[float, Counter[str], list[float]]:
    stop = threading.Event()
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    threads = [
        threading.Thread(target=simulate_client, args=(grpc_address, tx, stop, outcomes, latencies))
        for _ in range(clients)
    ]
    for thread in threads:
        thread.start()
    try:
        time.sleep(2.0)  # every client has a call in flight
        rate = block_rate(rpc, window_s)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return rate, outcomes, latencies


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the localnet
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--window", type=float, default=20.0, help="seconds of block time per measurement")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--simulation-gas-limit", type=int, help="app.toml simulation_gas_limit (default: gonkad's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        try:
            node = localnet.build(root, 1, "bench").nodes[0]
            if args.simulation_gas_limit is not None:
                config = load_app_config(Path(node.home))
                config.simulation_gas_limit = args.simulation_gas_limit
                save_app_config(Path(node.home), config)
            localnet.start(root, 1, "bench")
            localnet.wait_for_height(root, 3, 120)
            rpc = CometRPC(node.rpc)
            tx = big_tx(root, rpc, args.messages)
            log(f"tx of {args.messages} messages, {len(tx)} bytes")
            idle, loaded = [], []
            outcomes: Counter[str] = Counter()
            latencies: list[float] = []
            for run in range(args.runs):
                idle.append(block_rate(rpc, args.window))
                rate, seen, took = loaded_rate(rpc, f"127.0.0.1:{node.grpc_port}", tx, args.clients, args.window)
                loaded.append(rate)
                outcomes.update(seen)
                latencies.extend(took)
                log(f"run {run + 1}: idle {idle[-1]:.3f} blocks/s, with {args.clients} clients {rate:.3f} blocks/s")
        finally:
            localnet.stop(root)
    med = statistics.median
    print("| | median blocks/s | runs (blocks/s) |\n|---|---:|---|")
    print(f"| idle | {med(idle):.2f} | {', '.join(f'{r:.2f}' for r in idle)} |")
    print(
        f"| {args.clients} clients simulating a {args.messages}-message tx | {med(loaded):.2f} | "
        f"{', '.join(f'{r:.2f}' for r in loaded)} |"
    )
    print(f"simulations answered: {dict(outcomes)}; median latency {med(latencies) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
