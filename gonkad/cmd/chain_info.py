"""``gonkad chain-info [chain|assetlist|keplr] --home HOME``: the chain as wallets and explorers look it up, from a
node's home (``gonkad/chain_registry.py``): cosmos/chain-registry's chain.json and assetlist.json, and Keplr's chain
suggestion (only for a node that serves a REST API); all three as one object by file name when none is named."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sdk.cli.flags import add_home

FILES = {"chain": "chain.json", "assetlist": "assetlist.json", "keplr": "keplr.json"}


def cmd_chain_info(args: argparse.Namespace) -> None:
    from gonkad import chain_registry

    home = Path(args.home)
    if not (home / "config" / "genesis.json").exists():
        raise ValueError(f"{home} has no config/genesis.json; run `gonkad init` first")
    if args.file == "keplr":
        facts = chain_registry.chain_facts(home)
        print(json.dumps(chain_registry.keplr_json(facts, chain_registry.node_endpoints(home)), indent=2))
        return
    files = chain_registry.chain_info([home])
    print(json.dumps(files[FILES[args.file]] if args.file else files, indent=2))


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("chain-info", help="the chain's chain-registry files and Keplr chain suggestion")
    p.add_argument("file", nargs="?", choices=list(FILES), help="one file only (default: all, by file name)")
    add_home(p)
    p.set_defaults(func=cmd_chain_info)
