"""``gonkad genesis add-genesis-account|gentx|collect-gentxs|validate``: build and check a genesis.json."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from gonkad import genesis
from gonkad.cmd.keys import open_keyring
from sdk.cli.flags import add_home, checked_address
from sdk.cli.jsonfile import read_json_object
from sdk.coins import parse_coins
from sdk.crypto import bech32
from x.bls.keyfile import load_secret
from x.genutil import gentx
from x.stake.cli import one_coin
from x.stake.params import default_params

BOND_DENOM = default_params().bond_denom
"""A new chain's collateral denom (x/stake's default params)."""


def genesis_path(args: argparse.Namespace) -> Path:
    path = Path(args.home) / "config" / "genesis.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `gonkad init` first")
    return path


def cmd_add_account(args: argparse.Namespace) -> None:
    path = genesis_path(args)
    try:
        address = checked_address(args.address_or_key)
    except ValueError:
        address = open_keyring(args).get(args.address_or_key).address
    coins = parse_coins(args.coins)
    doc = read_json_object(path)
    app_state = doc.get("app_state") or genesis.default_app_state()
    if any(a.get("address") == address for a in app_state["auth"]["accounts"]):
        raise ValueError(f"account {address} is already in the genesis")
    doc["app_state"] = genesis.add_genesis_account(app_state, address, list(coins))
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"added {address} with {coins}")


def validate_genesis(path: Path, doc: dict[str, Any]) -> str:
    """Run InitChain on a throwaway store: the app state of ``doc`` (read from ``path``) is valid only if every
    module accepts it."""
    if not doc.get("chain_id"):
        raise ValueError(f"{path}: chain_id is empty")
    import tempfile

    from cosmpy.protos.tendermint.abci import types_pb2 as abci

    from app import GonkaApp  # the whole state machine loads for this command only
    from sdk.store.commitstore import CommitStore

    with tempfile.TemporaryDirectory() as tmp:
        store = CommitStore(str(Path(tmp) / "db"))
        try:
            GonkaApp(store).init_chain(
                abci.RequestInitChain(
                    chain_id=doc["chain_id"],
                    initial_height=int(doc.get("initial_height") or 1),
                    app_state_bytes=json.dumps(doc.get("app_state") or {}).encode(),
                )
            )
        finally:
            store.close()
    return doc["chain_id"]


def cmd_gentx(args: argparse.Namespace) -> None:
    from gonkad.config import read_cometbft_config  # the config module's pydantic models load for this command only

    home = Path(args.home)
    doc = read_json_object(genesis_path(args))
    keyring = open_keyring(args)
    info = keyring.get(args.key)
    amount = dict(parse_coins(args.amount)).get(BOND_DENOM)
    if amount is None:
        raise ValueError(f"the self-stake must be in {BOND_DENOM}")
    moniker = args.moniker or read_cometbft_config(home)["moniker"]
    bls_secret = None if args.no_bls_key else load_secret(home)  # config/bls_key.json, made by `gonkad init`
    raw = gentx.build_gentx(
        keyring.private_key(info.name),
        moniker,
        gentx.consensus_pubkey(home),
        (BOND_DENOM, amount),
        args.chain_id or doc["chain_id"],
        bls_secret=bls_secret,
    )
    print(f"Genesis transaction written to {gentx.write_gentx(home, gentx.node_id(home), raw)}")


def validator_messages(args: argparse.Namespace) -> Callable[[str], list[Message]]:
    """``gonkad tx stake create-validator``'s messages (x/stake/cli.py, ValidatorMessages): a gentx's, for a running
    chain - the consensus key of KEY_HOME (default: --home) config/priv_validator_key.json and, unless
    --no-bls-key, the BLS key of its config/bls_key.json. The files are read now, before any keyring or node."""
    coin = one_coin(args.amount)
    home = Path(args.key_home or args.home)
    pubkey = gentx.consensus_pubkey(home)
    bls_secret = None if args.no_bls_key else load_secret(home)
    return lambda operator: gentx.create_validator_messages(
        bech32.decode(operator), args.moniker, pubkey, (coin.denom, int(coin.amount)), bls_secret
    )


def cmd_collect_gentxs(args: argparse.Namespace) -> None:
    """Gentxs go into app_state.genutil; CometBFT's validator list is emptied so InitChain decides it."""
    path = genesis_path(args)
    folder = Path(args.gentx_dir) if args.gentx_dir else Path(args.home) / "config" / "gentx"
    doc = read_json_object(path)
    doc.setdefault("app_state", genesis.default_app_state())["genutil"] = {"gen_txs": gentx.collect_gentxs(folder)}
    doc["validators"] = []
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"collected {len(doc['app_state']['genutil']['gen_txs'])} gentxs into {path}")


def cmd_validate(args: argparse.Namespace) -> None:
    path = Path(args.file) if args.file else genesis_path(args)
    doc = read_json_object(path)  # an unreadable file is its own one-line error, not "invalid"
    try:
        chain_id = validate_genesis(path, doc)
    except Exception as exc:  # noqa: BLE001 - any module's rejection is reported as one line
        raise ValueError(f"{path} is invalid: {exc}") from None
    print(f"File at {path} is a valid genesis file for chain {chain_id}")


def register(commands: argparse._SubParsersAction) -> None:
    sub = commands.add_parser("genesis", help="edit and check the genesis file").add_subparsers(
        dest="genesis_command", required=True
    )
    p = sub.add_parser("add-genesis-account", help="fund an address or a keyring key at genesis")
    p.add_argument("address_or_key")
    p.add_argument("coins", help="e.g. 1000000ngonka")
    add_home(p)
    p.add_argument("--keyring-backend", choices=["file", "test"], default="file")
    p.set_defaults(func=cmd_add_account)
    p = sub.add_parser("gentx", help="sign this node's MsgCreateValidator (and MsgRegisterBlsKey) for the genesis file")
    p.add_argument("key", help="the operator's key (it must be funded in the genesis)")
    p.add_argument("amount", help=f"self-stake, e.g. 1000000000000{BOND_DENOM}")
    p.add_argument("--moniker", default="")
    p.add_argument("--chain-id", default="")
    p.add_argument(
        "--no-bls-key",
        action="store_true",
        help="do not register the node's BLS key (config/bls_key.json) in the gentx",
    )
    add_home(p)
    p.add_argument("--keyring-backend", choices=["file", "test"], default="file")
    p.set_defaults(func=cmd_gentx)
    p = sub.add_parser("collect-gentxs", help="put every gentx into the genesis file")
    p.add_argument("--gentx-dir", default="")
    add_home(p)
    p.set_defaults(func=cmd_collect_gentxs)
    p = sub.add_parser("validate", help="check that the genesis file is one this app accepts")
    p.add_argument("file", nargs="?")
    add_home(p)
    p.set_defaults(func=cmd_validate)
