"""Small helpers every benchmark script shares."""

from __future__ import annotations

import subprocess
import sys


def log(message: str) -> None:
    """Progress goes to stderr, so stdout carries only the report."""
    print(message, file=sys.stderr, flush=True)


def wait_all(processes: list[subprocess.Popen[bytes]], what: str) -> None:
    """Wait for processes started together; raise if one failed, and kill whatever is left either way."""
    try:
        for process in processes:
            if process.wait(timeout=3600) != 0:
                raise RuntimeError(f"{what} failed (exit {process.returncode})")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
