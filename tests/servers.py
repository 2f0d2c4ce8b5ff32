"""ASGI apps served for a test: uvicorn on a free loopback port in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

READY_TIMEOUT_S = 20.0


@contextmanager
def serve(app: Any, lifespan: str = "off", **options: Any) -> Iterator[str]:
    """``app`` under uvicorn (``lifespan``: "on" when the app starts and stops something with the server); yields
    its base URL and stops it however the block ends."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan, **options))
    listener = socket.create_server(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()
