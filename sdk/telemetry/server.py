"""The metrics endpoint: Prometheus' text format over HTTP on its own threads, beside the node's event loop.

Serving a scrape never touches the loop except to take a committed snapshot (``module_figures.py``), so a
slow or stuck scraper cannot hold up consensus.
"""

from __future__ import annotations

import logging
import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server

log = logging.getLogger("gonkad.telemetry")


class MetricsServer:
    """``registry`` served at ``http://host:port/metrics`` (port 0 picks one: see ``port``) until ``stop``."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        self._httpd: WSGIServer
        self._thread: threading.Thread
        self._httpd, self._thread = start_http_server(port, host, registry)
        self.port = self._httpd.server_port
        log.info("metrics on http://%s:%d/metrics", host, self.port)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
