"""The Transfer Agent with its chain-backed ChainView: what starting every inference on a real chain costs.

Side by side in one run, over the same fast fake ML node (``tests/agent_fakes.FakeNode``) and with
``bench_agent``'s load generator: the node directly, the TA over the in-memory ChainView (``bench_agent``'s),
and the TA over ``x.inference.client.ChainInferenceView`` on a 1-validator localnet, as ``gonkad agent start``
runs it (``offload_chain_calls`` on): every request it checks against the chain's registry and the requester's
balance (gRPC) and starts with a ``MsgStartInference`` signed by the TA and sent with ``broadcast_tx_sync``
(CheckTx) before forwarding. The chain registers the model at genesis and the node by
``gonkad tx inference register-node`` (host val0); the requester and the TA are funded by the faucet. The fake
node never finishes anything: the inferences expire later, which does not touch the figures.

    .venv/bin/python bench/bench_agent_chain.py [--requests 500] [--concurrency 32] [--seconds 5] [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_agent import (
    ROOT, TA_ADDRESS, TA_KEY, USER_ADDRESS, Processes, Target, measure, ratios, rounded, serve_forever, signed,
    start_role, unsigned, versions,
)

SHA = hashlib.sha256(b"bench chain model").hexdigest()
MODEL = f"m1@sha256:{SHA}"
BODY = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 16,
                   "seed": 7}).encode()


def role_chain_ta(rpc: str, grpc: str) -> None:
    """The TA as ``gonkad agent start`` runs it, its key the benchmark's TA key."""
    from agent.server import Agent, AgentConfig
    from x.inference.client import ChainInferenceView
    view = ChainInferenceView(rpc, TA_KEY, grpc)
    serve_forever(Agent(AgentConfig(key=TA_KEY, chain=view, queue_bound=4096, offload_chain_calls=True)))


def gonkad(*args: str) -> dict[str, Any]:
    """A ``gonkad tx`` sent and committed (code 0)."""
    out = subprocess.run([sys.executable, "-m", "gonkad", *args, "-y", "--output", "json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(out.stdout + out.stderr)
    return dict(json.loads(out.stdout))


def chain(folder: Path, node_url: str) -> tuple[Path, str, str]:
    """A running 1-validator localnet with the model, the node and the two accounts; (root, rpc, grpc)."""
    from gonkad import genesis, localnet
    from sdk.client.rpc import CometRPC, RPCError
    base = localnet.load_settings(validators=1, chain_id="bench-ta")
    settings = base.model_copy(update={"genesis": genesis.merge_overrides(base.genesis, {"inference": {"models": [
        {"id": MODEL, "name": "m1", "weights_sha256": SHA, "context_length": "512", "price_per_token": "1"}]}})})
    root = folder / "net"
    localnet.start(root, settings=settings)
    localnet.wait_for_height(root, 2)
    node = localnet.load(root).nodes[0]
    common = ["--home", str(root), "--keyring-backend", "test", "--node", node.rpc]
    sent = [gonkad("tx", "bank", "send", "faucet", USER_ADDRESS, "1000000000000000ngonka", *common),
            gonkad("tx", "bank", "send", "faucet", TA_ADDRESS, "1000000000ngonka", *common),
            gonkad("tx", "inference", "register-node", "n0", node_url, "--models", MODEL, "--max-concurrency",
                   str(1 << 20), "--from", "val0", "--gas", "400000", *common)]
    rpc = CometRPC(node.rpc)
    for tx in sent:
        deadline = time.monotonic() + 30
        while True:
            try:
                result = rpc.tx(bytes.fromhex(tx["txhash"]))["tx_result"]
                break
            except RPCError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        if int(result.get("code", 0)) != 0:
            raise RuntimeError(f"tx {tx['txhash']} failed: {result.get('log')}")
    return root, node.rpc, f"127.0.0.1:{node.grpc_port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=["chain-ta"])
    parser.add_argument("urls", nargs="*")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.role == "chain-ta":
        return role_chain_ta(*args.urls)
    from gonkad import localnet
    with tempfile.TemporaryDirectory() as folder:
        root = None
        try:
            with Processes() as processes:
                node_url = start_role(processes, "node")[1]
                root, rpc, grpc = chain(Path(folder), node_url)
                memory_pid, memory_url = start_role(processes, "ta", "--model", MODEL, node_url)
                chain_pid, chain_url = processes.ready_line(
                    "chain-backed TA", [sys.executable, __file__, "--role", "chain-ta", rpc, grpc])
                targets = [Target("direct", node_url, unsigned, body=BODY),
                           Target("ta_memory", memory_url, lambda n: signed(n, BODY), memory_pid, body=BODY),
                           Target("ta_chain", chain_url, lambda n: signed(n, BODY), chain_pid, body=BODY)]
                import uvloop
                result = uvloop.run(measure(targets, args.requests, args.concurrency, args.seconds, args.rounds,
                                            warm=100))
        finally:
            if root is not None:
                localnet.stop(root)
    result["chain_over_memory"] = ratios(result, "ta_chain", "ta_memory")
    print(json.dumps(rounded({"concurrency": args.concurrency, "seconds": args.seconds, "rounds": args.rounds,
                              "requests": args.requests, "load_average": os.getloadavg(),
                              "python": sys.version.split()[0], "versions": versions(), **result}), indent=1))


if __name__ == "__main__":
    main()
