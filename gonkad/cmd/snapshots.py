"""``gonkad snapshots list|export|restore|delete --home HOME``: a node's state-sync snapshots (sdk/snapshots).

``list`` and ``delete`` touch the snapshot files only, so they work beside a running node; ``export`` (snapshot a
kept height) and ``restore`` (fill an empty application store from a stored snapshot) open the application store,
which only a stopped node leaves unlocked."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gonkad.config import load_app_config, snapshot_store
from sdk.cli.flags import add_home
from sdk.snapshots.format import FORMAT
from sdk.snapshots.store import SnapshotStore


def _snapshot_store(home: Path) -> SnapshotStore:
    """The home's snapshots as the node keeps them (so an export is the snapshot the node would take)."""
    return snapshot_store(home, load_app_config(home))


def cmd_list(args: argparse.Namespace) -> None:
    stored = _snapshot_store(Path(args.home)).listed()
    print(
        json.dumps(
            [
                {"height": s.height, "format": s.format, "chunks": s.chunks, "hash": s.hash.hex().upper()}
                for s in stored
            ],
            indent=2,
        )
    )


def cmd_delete(args: argparse.Namespace) -> None:
    if not _snapshot_store(Path(args.home)).delete(args.height, args.format):
        raise ValueError(f"no snapshot at height {args.height} in format {args.format}")
    print(json.dumps({"deleted": {"height": args.height, "format": args.format}}))


def cmd_export(args: argparse.Namespace) -> None:
    from gonkad.export import open_stopped_store
    from sdk.snapshots.manager import write_snapshot

    home = Path(args.home)
    store = open_stopped_store(home)
    try:
        oldest, latest = store.available_versions()
        height = latest if args.height is None else args.height
        if latest == 0:
            raise ValueError(f"{home} has committed no block yet: nothing to snapshot")
        if not max(oldest, 1) <= height <= latest:
            raise ValueError(f"height {height} is not kept by this node: it keeps heights {max(oldest, 1)}..{latest}")
        info = write_snapshot(_snapshot_store(home), store.snapshot_at(height), store.root_at(height))
    finally:
        store.close()
    print(
        json.dumps(
            {"height": info.height, "format": info.format, "chunks": info.chunks, "hash": info.hash.hex().upper()}
        )
    )


def cmd_restore(args: argparse.Namespace) -> None:
    from gonkad.export import open_stopped_store
    from sdk.snapshots.restore import restore_local

    home = Path(args.home)
    snapshots = _snapshot_store(home)
    info = snapshots.get(args.height, args.format)
    if info is None:
        raise ValueError(f"no snapshot at height {args.height} in format {args.format}")
    store = open_stopped_store(home, create=True)
    try:
        restore_local(store, info.metadata, info.chunks, lambda i: snapshots.load_chunk(info.height, info.format, i))
        result = {"height": store.version, "app_hash": store.root_hash.hex().upper()}
    finally:
        store.close()
    print(json.dumps(result))


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("snapshots", help="a node's state-sync snapshots: list, export, restore, delete")
    actions = p.add_subparsers(dest="action", required=True)
    a = actions.add_parser("list", help="the stored snapshots, newest first (files only: works beside a running node)")
    add_home(a)
    a.set_defaults(func=cmd_list)
    a = actions.add_parser("export", help="snapshot a stopped node's latest (or a kept) height into its snapshots")
    add_home(a)
    a.add_argument("--height", type=int, default=None, help="a height the node keeps (default: the latest)")
    a.set_defaults(func=cmd_export)
    a = actions.add_parser("restore", help="restore a stopped node's empty application store from a stored snapshot")
    add_home(a)
    a.add_argument("height", type=int)
    a.add_argument("format", type=int, nargs="?", default=FORMAT)
    a.set_defaults(func=cmd_restore)
    a = actions.add_parser("delete", help="delete a stored snapshot (files only)")
    add_home(a)
    a.add_argument("height", type=int)
    a.add_argument("format", type=int, nargs="?", default=FORMAT)
    a.set_defaults(func=cmd_delete)
