"""The Transfer Agent with its chain-backed ChainView: what starting every inference on a real chain costs.

Side by side in one run, over the same fast fake ML node (``tests/agent_fakes.FakeNode``) and with
``bench_agent``'s load generator: the node directly, the TA over the in-memory ChainView (``bench_agent``'s),
and the TA over ``agent.view.ChainInferenceView`` on a 1-validator localnet, as ``gonkad agent start``
runs it (``offload_chain_calls`` on): every request it checks against the chain's registry and the requester's
balance (gRPC) and starts with a ``MsgStartInference`` signed by the TA and sent with ``broadcast_tx_sync``
(CheckTx) before forwarding. The chain registers the models at genesis and the nodes by
``gonkad tx inference register-node`` (host val0); the requester and the TA are funded by the faucet.

With ``--executor``, two more ways through the same TA: to the host's executor proxy in front of the same fake
node (host val0's key, its finisher finishing what it serves), once with the proxy's own admission (the answer
held until the start is in a committed block: ``StartAdmission.confirm``) and once with the rule before it
(answered once CheckTx took the start): what paying for every answer costs a request, side by side. Each way
is its own model (m1 direct to the node, m2 and m3 through the two proxies), so one TA routes them all. After
the load, each proxy's finisher is given up to ``--drain`` seconds to see what it served finished on chain, and
its counts (finished, dropped, still pending) are reported: every answer paid for, or not.

``--ways`` keeps only the named ways (the direct one is always measured: added latency is over it), so that a
profiler attached to the processes sees one way's load alone.

    .venv/bin/python bench/bench_agent_chain.py [--requests 500] [--concurrency 32] [--seconds 5] [--rounds 5]
        [--warm 100] [--executor] [--ways ta_chain_executor_committed ...] [--drain 30]
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
    ROOT,
    TA_ADDRESS,
    TA_KEY,
    USER_ADDRESS,
    Processes,
    Target,
    measure,
    ratios,
    rounded,
    serve_forever,
    signed,
    start_role,
    unsigned,
    versions,
)

SHA = hashlib.sha256(b"bench chain model").hexdigest()
MODELS = {way: f"{name}@sha256:{SHA}" for way, name in (("direct", "m1"), ("checktx", "m2"), ("committed", "m3"))}
MODEL = MODELS["direct"]


def body_of(model: str) -> bytes:
    return json.dumps(
        {"model": model, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 16, "seed": 7}
    ).encode()


BODY = body_of(MODEL)


def role_chain_ta(rpc: str, grpc: str) -> None:
    """The TA as ``gonkad agent start`` runs it, its key the benchmark's TA key."""
    from agent.config import AgentConfig
    from agent.server import Agent
    from agent.view import ChainInferenceView

    view = ChainInferenceView(rpc, TA_KEY, grpc)
    serve_forever(Agent(AgentConfig(key=TA_KEY, chain=view, queue_bound=4096, offload_chain_calls=True)))


def role_executor(rpc: str, grpc: str, node_url: str, home: str, rule: str) -> None:
    """Host val0's executor proxy in front of the fake node, as ``gonkad executor start`` runs it, with its
    admission (``committed``) or the rule before it (``checktx``)."""
    from host import Executor, ExecutorConfig, Finisher, StartAdmission
    from sdk.keyring.keyring import Keyring

    class CheckTxOnly(StartAdmission):
        """Answered once CheckTx took the start (the terms bound to the start it carries), not held for its block."""

        def __init__(self, client: Any) -> None:
            super().__init__(client)
            self.starts: dict[bytes, Any] = {}

        def admit(self, inference_id: bytes, start_tx: bytes) -> Any:
            start = self.starts[inference_id] = super().admit(inference_id, start_tx)
            return start

        def confirm(self, inference_id: bytes) -> Any:
            return self.starts.pop(inference_id)

    key = Keyring(home, "test").private_key("val0")
    finisher = Finisher(rpc, key, grpc)
    finisher.start()
    admission = StartAdmission(finisher) if rule == "committed" else CheckTxOnly(finisher)
    serve_forever(Executor(ExecutorConfig(mlnode=node_url, finisher=finisher, admission=admission, release_key=key)))


def settled(urls: dict[str, str], drain_s: float) -> dict[str, Any]:
    """Each executor's finisher counts once nothing is pending (or ``drain_s`` ran out): rule → status."""
    import urllib.request

    deadline = time.monotonic() + drain_s
    out: dict[str, Any] = {}
    for rule, url in urls.items():
        while True:
            with urllib.request.urlopen(url + "/v1/executor/status", timeout=10) as reply:
                status = json.loads(reply.read())
            if not status["pending"] or time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        out[rule] = {key: status[key] for key in ("finished", "dropped", "pending")}
    return out


def gonkad(*args: str) -> dict[str, Any]:
    """A ``gonkad tx`` sent and committed (code 0)."""
    out = subprocess.run(
        [sys.executable, "-m", "gonkad", *args, "-y", "--output", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stdout + out.stderr)
    return dict(json.loads(out.stdout))


def chain(folder: Path) -> tuple[Path, str, str]:
    """A running 1-validator localnet with the models and the two accounts; (root, rpc, grpc)."""
    from gonkad import genesis, localnet

    base = localnet.load_settings(validators=1, chain_id="bench-ta")
    models = [
        {
            "id": model,
            "name": model.split("@")[0],
            "weights_sha256": SHA,
            "context_length": "512",
            "price_per_token": "1",
        }
        for model in MODELS.values()
    ]
    settings = base.model_copy(
        update={"genesis": genesis.merge_overrides(base.genesis, {"inference": {"models": models}})}
    )
    root = folder / "net"
    localnet.start(root, settings=settings)
    try:
        localnet.wait_for_height(root, 2)
        node = localnet.load(root).nodes[0]
        common = ["--home", str(root), "--keyring-backend", "test", "--node", node.rpc]
        # One send at a time: the CLI signs with the committed sequence, so a second send before the first's
        # block would reuse it ("account sequence mismatch").
        for address, amount in ((USER_ADDRESS, "1000000000000000ngonka"), (TA_ADDRESS, "1000000000ngonka")):
            committed(node.rpc, [gonkad("tx", "bank", "send", "faucet", address, amount, *common)])
    except BaseException:
        localnet.stop(root)
        raise
    return root, node.rpc, f"127.0.0.1:{node.grpc_port}"


def register(root: Path, rpc: str, nodes: dict[str, str]) -> None:
    """Host val0 registers one node a way (way → URL), serving that way's model; one transaction at a time."""
    common = ["--home", str(root), "--keyring-backend", "test", "--node", rpc]
    for way, url in nodes.items():
        committed(
            rpc,
            [
                gonkad(
                    "tx",
                    "inference",
                    "register-node",
                    f"n-{way}",
                    url,
                    "--models",
                    MODELS[way],
                    "--max-concurrency",
                    str(1 << 20),
                    "--from",
                    "val0",
                    "--gas",
                    "400000",
                    *common,
                )
            ],
        )


def committed(node_rpc: str, sent: list[dict[str, Any]]) -> None:
    """Each of ``sent`` in a block with code 0."""
    from sdk.client.rpc import CometRPC, RPCError

    rpc = CometRPC(node_rpc)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=["chain-ta", "executor"])
    parser.add_argument("urls", nargs="*")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=100)
    parser.add_argument("--executor", action="store_true")
    parser.add_argument("--ways", nargs="+", default=[])
    parser.add_argument("--drain", type=float, default=30.0)
    args = parser.parse_args()
    if args.role == "chain-ta":
        return role_chain_ta(*args.urls)
    if args.role == "executor":
        return role_executor(*args.urls)
    from gonkad import localnet

    with tempfile.TemporaryDirectory() as folder:
        root = None
        try:
            with Processes() as processes:
                node_url = start_role(processes, "node")[1]
                root, rpc, grpc = chain(Path(folder))
                ways = {"direct": node_url}
                pids: dict[str, int] = {}
                if args.executor:
                    for rule in ("checktx", "committed"):
                        pids[rule], ways[rule] = processes.ready_line(
                            f"executor ({rule})",
                            [sys.executable, __file__, "--role", "executor", rpc, grpc, node_url, str(root), rule],
                        )
                register(root, rpc, ways)
                memory_pid, memory_url = start_role(processes, "ta", "--model", MODEL, node_url)
                chain_pid, chain_url = processes.ready_line(
                    "chain-backed TA", [sys.executable, __file__, "--role", "chain-ta", rpc, grpc]
                )
                targets = [
                    Target("direct", node_url, unsigned, body=BODY),
                    Target("ta_memory", memory_url, lambda n: signed(n, BODY), memory_pid, body=BODY),
                    Target("ta_chain", chain_url, lambda n: signed(n, BODY), chain_pid, body=BODY),
                ]
                for rule in pids:
                    body = body_of(MODELS[rule])
                    targets.append(
                        Target(
                            f"ta_chain_executor_{rule}",
                            chain_url,
                            lambda n, body=body: signed(n, body),
                            chain_pid,
                            body=body,
                        )
                    )
                if args.ways:
                    targets = [t for t in targets if t.name == "direct" or t.name in args.ways]
                import uvloop

                result = uvloop.run(
                    measure(targets, args.requests, args.concurrency, args.seconds, args.rounds, warm=args.warm)
                )
                result["finisher"] = settled({rule: ways[rule] for rule in pids}, args.drain)
        finally:
            if root is not None:
                localnet.stop(root)
    if "ta_chain" in result and "ta_memory" in result:
        result["chain_over_memory"] = ratios(result, "ta_chain", "ta_memory")
    if "ta_chain_executor_committed" in result and "ta_chain_executor_checktx" in result:
        result["committed_over_checktx"] = ratios(result, "ta_chain_executor_committed", "ta_chain_executor_checktx")
    print(
        json.dumps(
            rounded(
                {
                    "concurrency": args.concurrency,
                    "seconds": args.seconds,
                    "rounds": args.rounds,
                    "requests": args.requests,
                    "warm": args.warm,
                    "load_average": os.getloadavg(),
                    "python": sys.version.split()[0],
                    "versions": versions(),
                    **result,
                }
            ),
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
