"""Where things live: the node home layout and the CometBFT binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LOCALNET_SETTINGS_FILE = PROJECT_ROOT / "localnet" / "settings.toml"
"""The localnet's settings (``gonkad localnet start --settings``'s default)."""


def tool_binary(name: str, explicit: str | None = None) -> str:
    """A Go tool ``make install`` builds: ``explicit``, then $NAME, then the project's own .bin/name, then PATH."""
    for candidate in (explicit, os.environ.get(name.upper()), str(PROJECT_ROOT / ".bin" / name)):
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"{name} binary not found; run `make install`")


def cometbft_binary(explicit: str | None = None) -> str:
    """--cometbft, then $COMETBFT, then the project's own .bin/cometbft, then PATH."""
    return tool_binary("cometbft", explicit)


def app_db(home: Path) -> Path:
    return home / "data" / "application.db"


def snapshot_dir(home: Path) -> Path:
    """Where the node keeps its state-sync snapshots (sdk/snapshots/store.py)."""
    return home / "data" / "snapshots"


def pid_file(home: Path, process: str) -> Path:
    return home / f"{process}.pid"
