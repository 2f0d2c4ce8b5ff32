"""A node's home laid out for Cosmovisor (v1.5.0, unchanged; ``make install`` builds it into ``.bin/``).

Cosmovisor runs ``$DAEMON_HOME/cosmovisor/current/bin/$DAEMON_NAME`` (first ``genesis/``), watches
``$DAEMON_HOME/data/upgrade-info.json``, and when gonkad halts at an upgrade's height and writes it, points
``current`` at ``upgrades/<name>/`` and starts that binary. gonkad is a Python program, so each release's "binary"
is a small executable that starts that release's interpreter on ``gonkad`` (``release_script``).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from gonkad.paths import tool_binary

DAEMON_NAME = "gonkad"


def cosmovisor_binary() -> str:
    """$COSMOVISOR, then the project's own .bin/cosmovisor, then PATH."""
    return tool_binary("cosmovisor")


def release_dir(home: Path, upgrade: str | None) -> Path:
    """Where Cosmovisor looks for a release: ``genesis`` (``upgrade`` None) or the upgrade's own folder."""
    return home / "cosmovisor" / ("genesis" if upgrade is None else f"upgrades/{upgrade}")


def release_script(python: str, extra_args: Sequence[str] = ()) -> str:
    """A ``gonkad`` executable for Cosmovisor: ``python -m gonkad`` with Cosmovisor's arguments, then
    ``extra_args`` (a release's own switches). gonkad has no pre-upgrade step: to Cosmovisor's ``pre-upgrade``
    it answers 1, Cosmovisor's "not implemented"."""
    tail = f" {shlex.join(extra_args)}" if extra_args else ""
    return f'#!/bin/sh\n[ "$1" = pre-upgrade ] && exit 1\nexec {shlex.join([python, "-m", DAEMON_NAME])} "$@"{tail}\n'


def install_release(
    home: Path, upgrade: str | None, python: str = sys.executable, extra_args: Sequence[str] = ()
) -> Path:
    """Write the release's ``bin/gonkad`` under ``home`` (genesis when ``upgrade`` is None); returns its path."""
    binary = release_dir(home, upgrade) / "bin" / DAEMON_NAME
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text(release_script(python, extra_args))
    binary.chmod(0o755)
    return binary


def environment(home: Path, backup: bool = True) -> dict[str, str]:
    """What Cosmovisor reads: the daemon and its home, restart after an upgrade, never download a binary; and
    whether to back up ``data/`` before switching (an operator should; a test network need not)."""
    return {
        "DAEMON_NAME": DAEMON_NAME,
        "DAEMON_HOME": str(home),
        "DAEMON_RESTART_AFTER_UPGRADE": "true",
        "DAEMON_ALLOW_DOWNLOAD_BINARIES": "false",
        "DAEMON_POLL_INTERVAL": "200ms",
        "DAEMON_SHUTDOWN_GRACE": "15s",  # SIGINT first, so gonkad stops its cometbft before any kill
        "UNSAFE_SKIP_BACKUP": "false" if backup else "true",
    }
