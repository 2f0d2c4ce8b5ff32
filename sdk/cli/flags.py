"""The Cosmos CLI flags every tx and query command shares, and how results are printed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from sdk.cli.decimals import with_dec_text
from sdk.crypto import bech32

DEFAULT_HOME = Path.home() / ".gonka"
DEFAULT_NODE = "tcp://127.0.0.1:26657"


def add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", default=str(DEFAULT_HOME), help="the node or client home folder")


def add_query_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node", default=DEFAULT_NODE, help="CometBFT RPC address")
    parser.add_argument("--grpc-addr", default=None, help="query over gRPC at this address instead of RPC")
    parser.add_argument("--output", "-o", choices=["json", "text"], default="text")


def add_tx_flags(parser: argparse.ArgumentParser, with_from: bool = True) -> None:
    """``with_from=False`` where the signer is a positional argument (``tx bank send FROM …``)."""
    add_query_flags(parser)
    add_home(parser)
    if with_from:
        parser.add_argument("--from", dest="from_", required=True, help="key name or address that signs")
    parser.add_argument("--chain-id", default=None, help="defaults to the node's network")
    parser.add_argument("--fees", default="", help="e.g. 2000ngonka")
    parser.add_argument("--gas", default="200000", help="gas limit, or 'auto' to simulate first")
    parser.add_argument("--gas-adjustment", default="1.0", help="multiplier on the simulated gas (auto)")
    parser.add_argument("--note", "--memo", dest="memo", default="")
    parser.add_argument("--keyring-backend", choices=["file", "test"], default="file")
    parser.add_argument("--broadcast-mode", choices=["sync", "async"], default="sync")
    parser.add_argument("--yes", "-y", action="store_true", help="skip the confirmation prompt")


def checked_address(text: str) -> str:
    """A bech32 account address, or ValueError with the reason (bad checksum, wrong prefix)."""
    bech32.decode(text)
    return text


def message_dict(message: Message) -> dict[str, Any]:
    """Proto3 JSON, as genesis files and proposal drafts hold it (``json_format.ParseDict`` reads it back)."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def shown_dict(message: Message) -> dict[str, Any]:
    """A reply as the CLI prints it: proto3 JSON with LegacyDec values as the SDK prints them (``decimals``)."""
    return with_dec_text(message, message_dict(message))


def _text(value: Any, indent: int = 0) -> list[str]:
    pad = "  " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines.extend(_text(item, indent + 1))
            else:
                lines.append(f"{pad}{key}: {item if item not in ({}, []) else '[]'}")
        return lines
    if isinstance(value, list):
        lines = []
        for item in value:
            sub = _text(item, indent + 1)
            lines.append(f"{pad}- {sub[0].strip()}" if sub else f"{pad}-")
            lines.extend(sub[1:])
        return lines
    return [f"{pad}{value}"]


def print_output(output: str, data: dict[str, Any]) -> None:
    print(json.dumps(data) if output == "json" else "\n".join(_text(data)))
