"""``gonkad export``: a stopped node's state at a height as a CometBFT genesis.json; the export itself is
``gonkad/export.py``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sdk.cli.flags import add_home


def cmd_export(args: argparse.Namespace) -> None:
    from gonkad.export import export_genesis  # the app loads for this command only

    text = json.dumps(export_genesis(Path(args.home), args.height), indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("export", help="write a stopped node's state at a height as a genesis.json")
    add_home(p)
    p.add_argument("--height", type=int, default=None, help="a height the node keeps (default: the latest)")
    p.add_argument("--output", default=None, help="the file to write (default: stdout)")
    p.set_defaults(func=cmd_export)
