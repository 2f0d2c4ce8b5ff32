"""Small helpers every benchmark script shares."""

from __future__ import annotations

import socket
import sys


def log(message: str) -> None:
    """Progress goes to stderr, so stdout carries only the report."""
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
