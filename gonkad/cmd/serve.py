"""What ``gonkad agent start`` and ``gonkad executor start`` share: argument checks, and serving an ASGI app under
uvicorn on a listening socket with a JSON ready line, a pid file and a clean stop on SIGTERM/SIGINT.

A failure before serving is one ``Error:`` line and exit code 1 (``gonkad.cli.main``); once the server listens,
``ready`` is printed as one JSON line; ``HOME/<name>.pid`` holds the process id while it serves; SIGTERM or
SIGINT close the server and the command returns (exit code 0).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gonkad.paths import pid_file

HOST_PORT = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d{1,5}\Z")  # \Z: $ would take a final newline too


def parse_port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise ValueError(f"invalid --port {text!r}: a number from 0 to 65535 (0: any free port)")
    return int(text)


def check_node(text: str) -> str:
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "http") or not parts.hostname or port is None:
        raise ValueError(f"invalid --node {text!r}: expected tcp://HOST:PORT")
    return text


def check_grpc(text: str | None) -> str | None:
    if text is not None and (not HOST_PORT.match(text) or int(text.rsplit(":", 1)[1]) > 65535):
        raise ValueError(f"invalid --grpc-addr {text!r}: expected HOST:PORT")
    return text


def check_url(text: str, flag: str, schemes: tuple[str, ...] = ("http", "https")) -> str:
    parts = urlsplit(text)
    if parts.scheme not in schemes or not parts.netloc:
        raise ValueError(f"invalid {flag} {text!r}: expected an {'/'.join(schemes)} URL")
    return text


def check_gas(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"invalid --gas {text!r}: a positive whole number")
    return int(text)


def listen(host: str, port: int) -> tuple[socket.socket, str]:
    """A listening socket (``port`` 0: any free one) and its http URL."""
    listener = socket.create_server((host, port), backlog=2048)
    return listener, f"http://{host}:{listener.getsockname()[1]}"


def serve(config: Any, listener: socket.socket, home: Path, name: str, ready: dict[str, Any], failed: str) -> None:
    """Run the uvicorn ``config`` on ``listener`` until SIGTERM/SIGINT: ``ready`` printed once it listens, the pid
    in ``home/<name>.pid`` meanwhile. An app whose startup failed is ``OSError(failed)``."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                print(json.dumps(ready), flush=True)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = Server(config)
    pids = pid_file(home, name)
    home.mkdir(parents=True, exist_ok=True)
    pids.write_text(str(os.getpid()))
    # uvicorn stops on SIGTERM/SIGINT and then raises the signal again for the handler it found: a quiet one
    # here, so the process ends by returning (exit code 0) after the caller's cleanup.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        server.run(sockets=[listener])
    except SystemExit:  # uvicorn's exit when the app's startup failed
        raise OSError(failed) from None
    finally:
        pids.unlink(missing_ok=True)
        listener.close()
