"""The node's Prometheus metrics (app.toml ``[telemetry]``): the framework's own observations of ABCI and
gRPC (``node_metrics.py``), each module's key figures read from committed state (``figures.py``, the
module side; ``module_figures.py``, the collector) and the HTTP endpoint on its own thread (``server.py``).

Metrics are node-local observations: nothing here feeds state, so wall-clock durations are fine.
"""
