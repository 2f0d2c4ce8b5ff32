"""An app's ABCI methods reported to an observer as the node's ABCI server reports them, for what drives an app
without the server (the in-process tests and benchmarks) and must see the same metrics at the same cost."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sdk.abci.application import Application
from sdk.abci.server import Observer

OBSERVED = ("finalize_block", "commit", "check_tx", "query")
"""The calls the node's metrics read (sdk/telemetry/node_metrics.py)."""


def observe_calls(app: Application, observe: Observer) -> None:
    """Wrap ``app``'s ``OBSERVED`` methods in place: each call is timed and reported after it answers."""
    for kind in OBSERVED:
        setattr(app, kind, _timed(kind, getattr(app, kind), observe))


def _timed(kind: str, method: Callable[[Any], Any], observe: Observer) -> Callable[[Any], Any]:
    def call(request: Any) -> Any:
        started = time.perf_counter()
        response = method(request)
        observe(kind, request, response, time.perf_counter() - started)
        return response

    return call
