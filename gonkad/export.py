"""A stopped node's state at a height as a CometBFT genesis.json (the SDK's ``export``; the command:
``gonkad/cmd/export.py``).

A chain started from the file has the same module state: every module exports its own state (its
``export_genesis``), the validators come back from x/stake as InitChain's validator set, and heights go on
from the exported one (``initial_height``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plyvel

from app import GonkaApp
from gonkad import genesis
from gonkad.paths import app_db
from sdk.baseapp import stored_chain_id, stored_consensus_params
from sdk.cli.jsonfile import read_json_object
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore, VersionUnavailableError


def open_stopped_store(home: Path, create: bool = False) -> CommitStore:
    """The node's application store, which only a stopped node leaves unlocked (LevelDB allows one process).
    ``create``: make an empty one if the node has none yet (a snapshot restore into a new home)."""
    path = app_db(home)
    if create and (home / "config").is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_dir():
        raise FileNotFoundError(f"{home} has no application store ({path}): not a node home, or never started")
    try:
        return CommitStore(str(path))
    except plyvel.IOError as exc:
        if "lock" in str(exc).lower():
            raise ValueError(
                f"{path} is locked by a running node: stop it first (this command reads a stopped node's store)"
            ) from None
        raise


def export_genesis(home: Path, height: int | None = None) -> dict[str, Any]:
    """The genesis of a chain that goes on from ``height`` (default: the latest) of the node at ``home``, with
    the genesis time of the node's own config/genesis.json and the consensus params the state holds at
    ``height`` (the genesis file's, unless the authority changed them)."""
    node_genesis_path = home / "config" / "genesis.json"
    if not node_genesis_path.is_file():
        raise FileNotFoundError(f"{node_genesis_path} does not exist: {home} is not a node home")
    node_genesis = read_json_object(node_genesis_path)
    store = open_stopped_store(home)
    try:
        oldest, latest = store.available_versions()
        height = latest if height is None else height
        if latest == 0:
            raise ValueError(f"{home} has committed no block yet: nothing to export")
        if not max(oldest, 1) <= height <= latest:
            raise ValueError(f"height {height} is not kept by this node: it keeps heights {max(oldest, 1)}..{latest}")
        try:
            app_state = GonkaApp(store).export_app_state(height)
        except VersionUnavailableError as exc:
            raise ValueError(f"height {height} cannot be exported: {exc}") from None
        chain_id = stored_chain_id(store)
        consensus_params = stored_consensus_params(CacheKV(store.state_at(height)))
    finally:
        store.close()
    return genesis.exported_genesis(node_genesis, chain_id, height, app_state, consensus_params)
