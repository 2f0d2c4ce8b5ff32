"""Background processes recorded by pid files, checked against /proc so a reused pid is not ours."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def is_running(pid: int | None, name: str) -> bool:
    """True if ``pid`` is alive, not a zombie, and its command line mentions ``name``."""
    if pid is None:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" and name.encode() in cmdline


def live_pid(path: Path, name: str) -> int | None:
    pid = read_pid(path)
    return pid if is_running(pid, name) else None


def terminate(pid: int, name: str, grace_s: float = 15.0) -> None:
    """SIGTERM, then SIGKILL after the grace period."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_running(pid, name):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_child(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """A child of this process: SIGTERM, then SIGKILL if it has not exited within the grace period; reaped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
