"""``gonkad agent start``: a Transfer Agent (``agent/``) on a chain, under uvicorn.

    gonkad agent start --home H --node tcp://127.0.0.1:26657 --grpc-addr 127.0.0.1:9090 --from KEY --port 8000 \
        [--keyring-backend test] [--ta URL …] [--host 127.0.0.1] [--chain-id ID] [--gas N] [--fees COINS] \
        [--queue-bound N]

The TA's key is ``--from`` of the keyring in ``--home``; it signs what requesters sign for, ``/v1/identity`` and
the TA's transactions (``MsgStartInference``, ``MsgReassignInference``), so its account must exist on chain
(funded once) and pay ``--fees`` if the chain asks for any. It reaches the chain through
``agent.view.ChainInferenceView`` (queries over ``--grpc-addr``, else RPC; transactions over ``--node``)
with ``offload_chain_calls`` on. ``--ta`` (repeatable) names the other TAs it announces.

Every argument and the chain are checked before serving; a failure is one ``Error:`` line and exit code 1.
When the server listens, one JSON line is printed: ``{"url", "address", "chain_id", "pid"}``. The process id
is written to ``H/agent.pid`` (removed on exit); SIGTERM or SIGINT stop it cleanly: the server closes, the
agent's poller stops, exit code 0.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from agent.config import DEFAULT_GAS_LIMIT, AgentConfig
from gonkad.cmd.serve import check_gas, check_grpc, check_node, check_url, listen, parse_port, serve
from sdk.cli.flags import DEFAULT_HOME, DEFAULT_NODE
from sdk.cli.keyring import open_keyring
from sdk.coins import Coins, parse_coins

log = logging.getLogger("gonkad.agent")
PID_NAME = "agent"


def cmd_start(args: argparse.Namespace) -> None:
    from agent.server import Agent  # the TA and its web stack load for this command only
    from agent.view import ChainInferenceView
    from sdk.http.asgi import uvicorn_config

    port = parse_port(args.port)
    node = check_node(args.node)
    grpc_addr = check_grpc(args.grpc_addr)
    tas = [check_url(url, "--ta") for url in args.ta]
    gas = check_gas(args.gas)
    if not args.queue_bound.isdigit():
        raise ValueError(f"invalid --queue-bound {args.queue_bound!r}: a whole number (0: no queue)")
    fees = parse_coins(args.fees) if args.fees else Coins()
    keyring = open_keyring(args)
    key = keyring.private_key(keyring.get(args.from_).name)
    view = ChainInferenceView(node, key, grpc_addr, tas, chain_id=args.chain_id or "", gas_limit=gas, fees=fees)
    try:
        chain_id = view.chain_id()  # the node answers …
        view.models()  # … and so do its queries (over gRPC when given)
        agent = Agent(
            AgentConfig(
                key=key,
                chain=view,
                host=args.host,
                port=port,
                offload_chain_calls=True,
                queue_bound=int(args.queue_bound),
            )
        )
        listener, url = listen(args.host, port)
        serve(
            uvicorn_config(agent, args.host, port),
            listener,
            Path(args.home),
            PID_NAME,
            {"url": url, "address": agent.address, "chain_id": chain_id, "pid": os.getpid()},
            "the Transfer Agent did not start: its first read of the chain failed (see the log above)",
        )
    finally:
        view.close()
    log.info("agent stopped")


def register(sub: argparse._SubParsersAction) -> None:
    agent = sub.add_parser("agent", help="the Transfer Agent").add_subparsers(dest="agent_command", required=True)
    p = agent.add_parser("start", help="serve a Transfer Agent on the chain (agent/README.md)")
    p.add_argument("--home", default=str(DEFAULT_HOME), help="the home whose keyring holds --from; the pid file")
    p.add_argument("--node", default=DEFAULT_NODE, help="CometBFT RPC address: status and transactions")
    p.add_argument("--grpc-addr", default=None, help="the node's gRPC HOST:PORT for queries (else RPC)")
    p.add_argument("--from", dest="from_", required=True, help="the TA's key name or address")
    p.add_argument("--keyring-backend", choices=["file", "test"], default="file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", default="8000", help="0: any free port (the ready line names it)")
    p.add_argument("--ta", action="append", default=[], help="another TA's URL, announced in /v1/identity")
    p.add_argument("--chain-id", default=None, help="defaults to the node's network")
    p.add_argument("--gas", default=str(DEFAULT_GAS_LIMIT), help="gas limit of each start transaction")
    p.add_argument("--fees", default="", help="fee of each start transaction, e.g. 100ngonka")
    p.add_argument(
        "--queue-bound",
        default=str(AgentConfig.model_fields["queue_bound"].default),
        help="requests waiting for a busy node at most; beyond it 429 with Retry-After",
    )
    p.set_defaults(func=cmd_start)
