"""``gonkad query tx HASH``: a committed transaction's result and events, found by hash."""

from __future__ import annotations

import argparse
import re

from sdk.cli.flags import add_query_flags, print_output
from sdk.client.rpc import CometRPC
from sdk.client.tx import plain_events

HASH_RE = re.compile(r"^[0-9a-fA-F]{64}\Z")  # \Z: $ would take a final newline too


def cmd_tx(args: argparse.Namespace) -> None:
    if not HASH_RE.match(args.hash):
        raise ValueError(f"invalid tx hash {args.hash!r}: expected 64 hex characters")
    found = CometRPC(args.node).tx(bytes.fromhex(args.hash))
    result = found["tx_result"]
    print_output(
        args.output,
        {
            "height": found["height"],
            "txhash": found["hash"],
            "code": int(result.get("code", 0)),
            "codespace": result.get("codespace", ""),
            "raw_log": result.get("log", ""),
            "gas_wanted": result.get("gas_wanted", "0"),
            "gas_used": result.get("gas_used", "0"),
            "events": plain_events(result),
        },
    )


def register_query(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("tx", help="a transaction by its hash")
    p.add_argument("hash")
    add_query_flags(p)
    p.set_defaults(func=cmd_tx)
