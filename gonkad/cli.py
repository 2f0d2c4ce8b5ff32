"""The ``gonkad`` command line. Every failure is one line on stderr and a non-zero exit code.

Building the parser loads only the command asked for (``build_parser``) and only what its flags need: a command's
handler imports the app, the node, the localnet and such when it runs, so ``gonkad query … --help`` and every short
command start quickly."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from google.protobuf.message import Message

from gonkad.paths import LOCALNET_SETTINGS_FILE, cometbft_binary
from sdk.cli.flags import DEFAULT_HOME
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.tx import TxError
from sdk.errors import ABCIError
from sdk.keyring.keyring import KeyringError

MODULES = (
    "bank",
    "learning",
    "auth",
    "stake",
    "bls",
    "vesting",
    "slashing",
    "pool",
    "rewards",
    "inference",
    "epochs",
    "sprint",
    "poc",
    "gov",
    "upgrade",
)
"""Modules with ``tx MODULE`` and ``query MODULE`` commands (``x/MODULE/cli.py``), in ``--help``'s order; ``tx
consensus`` and ``query tx`` come after them."""

COMMANDS = {
    "genesis": "gonkad.cmd.genesis",
    "export": "gonkad.cmd.export",
    "snapshots": "gonkad.cmd.snapshots",
    "keys": "gonkad.cmd.keys",
    "mlnode": "mlnode.cli",
    "agent": "gonkad.cmd.agent",
    "executor": "gonkad.cmd.executor",
    "models": "gonkad.cmd.models",
    "train": "diloco.cli",
    "verify-work": "gonkad.cmd.verify_work",
    "chain-info": "gonkad.cmd.chain_info",
}
"""Top-level commands registered by their own file's ``register``."""

CARRY_ANY_MESSAGE = {"gov"}
"""Modules whose commands read or print any module's messages (a proposal's, packed in ``Any``): they load every
module's CLI, and with it every message type, as the whole parser does."""


class CLIError(Exception):
    """A user-facing failure: printed as one line, exit code 1."""


def cmd_init(args: argparse.Namespace) -> None:
    from gonkad import genesis
    from gonkad.config import AppConfig, edit_cometbft_config, save_app_config
    from x.bls.keyfile import create_key_file, key_file

    home = Path(args.home)
    if (home / "config" / "genesis.json").exists() and not args.overwrite:
        raise CLIError(f"{home} is already initialised; pass --overwrite to replace its genesis")
    subprocess.run([cometbft_binary(args.cometbft), "init", "--home", str(home)], check=True, capture_output=True)
    edit_cometbft_config(home, {"": {"moniker": args.moniker}})
    genesis.write_genesis(
        home / "config" / "genesis.json",
        args.chain_id,
        json.loads((home / "config" / "genesis.json").read_text())["validators"],
        genesis.default_app_state(),
        genesis.NEW_CHAIN_CONSENSUS_PARAMS,
    )
    if not (home / "config" / "app.toml").exists():
        save_app_config(home, AppConfig())
    create_key_file(home)  # the node's BLS key (x/bls): made once, kept by re-init like CometBFT's keys
    print(
        json.dumps(
            {"moniker": args.moniker, "chain_id": args.chain_id, "home": str(home), "bls_key_file": str(key_file(home))}
        )
    )


def cmd_start(args: argparse.Namespace) -> None:
    import asyncio
    import logging

    from gonkad.config import load_app_config
    from gonkad.node import run_node
    from x.upgrade.errors import UpgradeHalt

    home = Path(args.home)
    if not (home / "config" / "genesis.json").exists():
        raise CLIError(f"{home} has no config/genesis.json; run `gonkad init` first")
    logging.basicConfig(
        level=load_app_config(home).log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        code = asyncio.run(run_node(home, args.abci_only, args.cometbft, args.check_invariants, args.test_upgrade))
    except UpgradeHalt as exc:  # halted at a plan this binary cannot apply: nothing started
        raise CLIError(str(exc)) from None
    sys.exit(code)


def cmd_status(args: argparse.Namespace) -> None:
    print(json.dumps(CometRPC(args.node).status(), indent=2))


def cmd_localnet(args: argparse.Namespace) -> None:
    import time

    from gonkad import localnet

    root = Path(args.home)
    if args.action == "start":
        settings = localnet.load_settings(Path(args.settings), args.validators, args.chain_id, with_services=True)
        if args.cosmovisor:
            if not (root / localnet.SPEC_FILE).exists():
                localnet.build(root, settings=settings)
            localnet.use_cosmovisor(root)
        started = localnet.start(root, settings=settings)
        if args.wait:
            localnet.wait_for_height(root, 1, timeout_s=args.wait)
        print(json.dumps({"started": started, **localnet.status(root)}, indent=2))
    elif args.action == "stop":
        print(json.dumps({"stopped": localnet.stop(root)}))
    elif args.action == "status":
        print(json.dumps({**localnet.status(root), "chain_info": localnet.write_chain_info(root)}, indent=2))
    elif args.action == "train-and-serve":
        from gonkad.localnet_serve import train_and_serve

        def progress(line: str) -> None:
            print(line, file=sys.stderr, flush=True)

        print(json.dumps(train_and_serve(root, progress, test_fault_worker=args.test_fault_worker)))
    elif args.action == "release":
        if not args.name:
            raise CLIError("release needs --name, the upgrade plan's name")
        extra = ["--test-upgrade", args.name] if args.test_upgrade else []
        print(json.dumps({"installed": localnet.use_cosmovisor(root, args.name, extra)}))
    elif args.action == "join":
        if not args.name:
            raise CLIError("join needs --name, the new node's name")
        node = localnet.add_node(root, args.name, state_sync=args.state_sync)
        localnet.start_node(node)
        print(json.dumps({"joined": node.name, "home": node.home, "rpc": node.rpc, "state_sync": args.state_sync}))
    elif args.action == "watch":
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            nodes = localnet.status(root)["nodes"]
            print("  ".join(f"{n['name']}: h={n['height']} app={str(n['app_hash'])[:12]}" for n in nodes), flush=True)
            time.sleep(1.0)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``argv`` only the part it names: ``gonkad tx bank send …`` imports x/bank's CLI and
    no other module's, so a short command does not pay for loading them all. A word it does not know (or
    ``--help`` in its place) builds everything, for the full listing or argparse's own error."""
    words = [word for word in (argv if argv is not None else []) if not word.startswith("-")]
    command = words[0] if argv is not None and words else None
    module = words[1] if len(words) > 1 else None
    parser = argparse.ArgumentParser(prog="gonkad", description="Gonka node daemon")
    sub = parser.add_subparsers(dest="command", required=True)
    known = command in {"init", "start", "status", "tx", "query", "q", "localnet", *COMMANDS}
    if not known or command in {"init", "start", "status"}:
        _add_node_commands(sub)
    if not known or command == "tx":
        _add_tx_commands(sub, module)
    if not known or command in {"query", "q"}:
        _add_query_commands(sub, module)
    for name, path in COMMANDS.items():
        if not known or command == name:
            importlib.import_module(path).register(sub)
    if not known or command == "localnet":
        _add_localnet_command(sub)
    return parser


def _add_node_commands(sub: argparse._SubParsersAction) -> None:
    """``init``, ``start`` and ``status``: one node's home and process."""
    p = sub.add_parser("init", help="initialise a node home (CometBFT config, keys, genesis)")
    p.add_argument("moniker")
    p.add_argument("--home", default=str(DEFAULT_HOME))
    p.add_argument("--chain-id", default="gonka-1")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--cometbft", help="path to the cometbft binary")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("start", help="run the node: ABCI app plus a supervised cometbft")
    p.add_argument("--home", default=str(DEFAULT_HOME))
    p.add_argument("--abci-only", action="store_true", help="serve ABCI only; run cometbft yourself")
    p.add_argument(
        "--check-invariants",
        action="store_true",
        help="check every module's invariants after each block; halt on a broken one",
    )
    p.add_argument("--cometbft", help="path to the cometbft binary")
    p.add_argument(
        "--test-upgrade",
        metavar="NAME",
        help="TEST ONLY: this binary carries the software upgrade NAME (its handler runs the migrations, and "
        "x/upgrade's consensus version goes 1 -> 2, recording NAME-migrated as applied)",
    )
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("status", help="the node's CometBFT status as JSON")
    p.add_argument("--node", default="tcp://127.0.0.1:26657")
    p.set_defaults(func=cmd_status)


def _add_tx_commands(sub: argparse._SubParsersAction, module: str | None) -> None:
    """``tx MODULE …``: every module's transactions (only ``module``'s when it names one)."""
    tx_modules = sub.add_parser("tx", help="sign and broadcast a transaction").add_subparsers(
        dest="module", required=True
    )
    names = [*MODULES, "consensus"]
    for name in [module] if module in names and module not in CARRY_ANY_MESSAGE else names:
        cli = importlib.import_module(f"x.{name}.cli")
        if name == "stake":
            cli.register_tx(tx_modules, _validator_messages)  # create-validator: a gentx's messages
        else:
            cli.register_tx(tx_modules)  # consensus: every module's update-params, sdk/cli/params.py


def _add_query_commands(sub: argparse._SubParsersAction, module: str | None) -> None:
    """``query MODULE …`` (alias ``q``): every module's queries, and transactions by hash (only ``module``'s when it
    names one)."""
    query = sub.add_parser("query", aliases=["q"], help="query the chain").add_subparsers(dest="module", required=True)
    paths = {name: f"x.{name}.cli" for name in MODULES} | {"tx": "gonkad.cmd.query_tx"}
    for name in [module] if module in paths and module not in CARRY_ANY_MESSAGE else list(paths):
        importlib.import_module(paths[name]).register_query(query)


def _validator_messages(args: argparse.Namespace) -> Callable[[str], list[Message]]:
    from gonkad.cmd.genesis import validator_messages

    return validator_messages(args)


def _add_localnet_command(sub: argparse._SubParsersAction) -> None:
    """``localnet start|stop|status|watch|join|release|train-and-serve``: an N-validator network on this machine
    (under Cosmovisor with ``--cosmovisor``, a plan's release installed by ``release``), a full node joining it (by
    state sync with ``--state-sync``), and the path from training to a served model on it
    (``gonkad.localnet_serve``)."""
    p = sub.add_parser("localnet", help="an N-validator network on this machine")
    p.add_argument("action", choices=["start", "stop", "status", "watch", "join", "release", "train-and-serve"])
    p.add_argument("--settings", default=str(LOCALNET_SETTINGS_FILE), help="the network's settings (TOML)")
    p.add_argument("--validators", type=int, help="overrides the settings' validators")
    p.add_argument("--home", default="localnet/home")
    p.add_argument("--chain-id", help="overrides the settings' chain_id")
    p.add_argument("--wait", type=float, default=0.0, help="start: wait up to this many seconds for blocks")
    p.add_argument("--seconds", type=float, default=10.0, help="watch: for how long")
    p.add_argument("--name", help="join: the new node's name (its home is HOME/NAME); release: the plan's name")
    p.add_argument("--cosmovisor", action="store_true", help="start: run the validators under Cosmovisor")
    p.add_argument(
        "--test-upgrade",
        action="store_true",
        help="release, TEST ONLY: the release is this code carrying the plan (gonkad start --test-upgrade NAME)",
    )
    p.add_argument("--state-sync", action="store_true", help="join: restore a peer's snapshot, not every block")
    p.add_argument(
        "--test-fault-worker",
        help="train-and-serve, TEST ONLY: this worker (worker0 or worker1) trains round 0 on another data order than "
        "it commits, so the hosts' replays judge it invalid",
    )
    p.set_defaults(func=cmd_localnet)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        args.func(args)
    except (CLIError, RPCError, TxError, KeyringError, OSError, ValueError, TimeoutError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(1)
    except ABCIError as exc:
        print(f"Error: {exc.log}", file=sys.stderr)
        sys.exit(1)
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        print(f"Error: {exc.cmd[0]} failed: {detail[-1] if detail else exc.returncode}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
