"""``gonkad agent start``: a Transfer Agent (``agent/``) on a chain, under uvicorn.

    gonkad agent start --home H --node tcp://127.0.0.1:26657 --grpc-addr 127.0.0.1:9090 --from KEY --port 8000 \
        [--keyring-backend test] [--ta URL …] [--host 127.0.0.1] [--chain-id ID] [--gas N] [--fees COINS]

The TA's key is ``--from`` of the keyring in ``--home``; it signs what requesters sign for, ``/v1/identity`` and
the TA's transactions (``MsgStartInference``, ``MsgReassignInference``), so its account must exist on chain
(funded once) and pay ``--fees`` if the chain asks for any. It reaches the chain through
``x.inference.client.ChainInferenceView`` (queries over ``--grpc-addr``, else RPC; transactions over ``--node``)
with ``offload_chain_calls`` on. ``--ta`` (repeatable) names the other TAs it announces.

Every argument and the chain are checked before serving; a failure is one ``Error:`` line and exit code 1.
When the server listens, one JSON line is printed: ``{"url", "address", "chain_id", "pid"}``. The process id
is written to ``H/agent.pid`` (removed on exit); SIGTERM or SIGINT stop it cleanly: the server closes, the
agent's poller stops, exit code 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent.server import Agent, AgentConfig, uvicorn_config
from gonkad.paths import pid_file
from sdk.cli.flags import DEFAULT_HOME, DEFAULT_NODE
from sdk.cli.keyring import open_keyring
from sdk.coins import Coins, parse_coins
from x.inference.client import DEFAULT_GAS_LIMIT, ChainInferenceView

log = logging.getLogger("gonkad.agent")
PID_NAME = "agent"
HOST_PORT = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def parse_port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise ValueError(f"invalid --port {text!r}: a number from 0 to 65535 (0: any free port)")
    return int(text)


def check_node(text: str) -> str:
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "http") or not parts.hostname or port is None:
        raise ValueError(f"invalid --node {text!r}: expected tcp://HOST:PORT")
    return text


def check_grpc(text: str | None) -> str | None:
    if text is not None and (not HOST_PORT.match(text) or int(text.rsplit(":", 1)[1]) > 65535):
        raise ValueError(f"invalid --grpc-addr {text!r}: expected HOST:PORT")
    return text


def check_ta(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"invalid --ta {text!r}: expected an http(s) URL")
    return text


class _Server:
    """uvicorn's server, printing the ready line once the agent has started and the socket listens."""

    def __init__(self, config: Any, ready: dict[str, Any]) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets)
                if self.started:
                    print(json.dumps(ready), flush=True)

        self.server = Server(config)

    def run(self, sockets: list[socket.socket]) -> None:
        self.server.run(sockets=sockets)


def cmd_start(args: argparse.Namespace) -> None:
    port = parse_port(args.port)
    node = check_node(args.node)
    grpc_addr = check_grpc(args.grpc_addr)
    tas = [check_ta(url) for url in args.ta]
    if not args.gas.isdigit() or int(args.gas) == 0:
        raise ValueError(f"invalid --gas {args.gas!r}: a positive whole number")
    fees = parse_coins(args.fees) if args.fees else Coins()
    home = Path(args.home)
    keyring = open_keyring(args)
    key = keyring.private_key(keyring.get(args.from_).name)
    view = ChainInferenceView(node, key, grpc_addr, tas, chain_id=args.chain_id or "", gas_limit=int(args.gas),
                              fees=fees)
    try:
        chain_id = view.chain_id()  # the node answers …
        view.models()  # … and so do its queries (over gRPC when given)
        agent = Agent(AgentConfig(key=key, chain=view, host=args.host, port=port, offload_chain_calls=True))
        listener = socket.create_server((args.host, port), backlog=2048)
        url = f"http://{args.host}:{listener.getsockname()[1]}"
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        server = _Server(uvicorn_config(agent), {"url": url, "address": agent.address, "chain_id": chain_id,
                                                 "pid": os.getpid()})
        pids = pid_file(home, PID_NAME)
        home.mkdir(parents=True, exist_ok=True)
        pids.write_text(str(os.getpid()))
        # uvicorn stops on SIGTERM/SIGINT and then raises the signal again for the handler it found: a quiet
        # one here, so the process ends by returning (exit code 0) after the cleanup below.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        try:
            server.run([listener])
        except SystemExit:  # uvicorn's exit when the agent's startup (its first read of the chain) failed
            raise OSError("the Transfer Agent did not start: its first read of the chain failed (see the log "
                          "above)") from None
        finally:
            pids.unlink(missing_ok=True)
            listener.close()
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
    p.set_defaults(func=cmd_start)
