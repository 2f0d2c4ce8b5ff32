"""Each module's key figures (``Module.metrics``), read from the committed state when scraped, at most once
per committed height.

A scrape runs on the metrics server's thread. The snapshot of the committed state is taken where the store
allows it (the node's event loop, ``take_snapshot``), which costs the loop microseconds; the modules then read
it on the scraping thread, so consensus never waits on them, and the figures are kept until the next height.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sdk.baseapp.state import CommittedState
from sdk.context import BlockHeader, Context
from sdk.module import Module
from sdk.store.cachekv import CacheKV
from sdk.telemetry.figures import Figure

log = logging.getLogger("gonkad.telemetry")

Figures = list[tuple[str, Figure]]
"""Each figure with the name of the module that gave it."""
SnapshotJob = Callable[[], tuple[int, Figures]]
"""The modules' figures over one committed snapshot, and its height: safe to run on any thread."""


def read_figures(modules: Sequence[Module], state: CommittedState, header: BlockHeader) -> tuple[int, Figures]:
    """Every module's figures over ``state`` (a committed snapshot) at ``header``'s height; a module whose
    ``metrics`` raises is logged and left out, the others are kept."""
    figures: Figures = []
    for module in modules:
        try:
            figures.extend((module.name, figure) for figure in module.metrics(Context(CacheKV(state), header)))
        except Exception:  # noqa: BLE001 - one module's figures must not cost the others theirs
            log.exception("metrics of module %s failed at height %d", module.name, header.height)
    return header.height, figures


class ModuleFigures(Collector):
    """A collector of the modules' figures as gauges ``gonka_<module>_<name>``, and of the committed height they
    were read at (``gonka_figures_height``).

    ``committed_height``: the latest committed height (a plain read, safe from any thread);
    ``take_snapshot``: a ``SnapshotJob`` over the latest committed state, taken where the store allows.
    """

    def __init__(self, committed_height: Callable[[], int], take_snapshot: Callable[[], SnapshotJob]) -> None:
        self._committed_height = committed_height
        self._take_snapshot = take_snapshot
        self._lock = threading.Lock()
        self._height = -1
        self._figures: Figures = []
        self._closed = False

    def close(self) -> None:
        """No read runs once this returns, and none starts after: call before the store closes."""
        with self._lock:
            self._closed = True

    def figures(self) -> tuple[int, Figures]:
        """The figures of the latest committed height and that height, read once per height (concurrent scrapes
        wait); none before the first block."""
        with self._lock:
            height = self._committed_height()
            if height and height != self._height and not self._closed:
                try:
                    self._height, self._figures = self._take_snapshot()()
                except Exception:  # noqa: BLE001 - a scrape must still get the framework's metrics
                    log.exception("could not read the modules' figures; serving those of height %d", self._height)
            return self._height, self._figures

    def collect(self) -> Iterator[Metric]:
        height, figures = self.figures()
        if height < 0:
            return
        yield GaugeMetricFamily("gonka_figures_height", "The committed height the module figures were read at.", height)
        families: dict[str, GaugeMetricFamily] = {}
        for module, figure in figures:
            name = f"gonka_{module}_{figure.name}"
            family = families.get(name)
            if family is None:
                labels = [label for label, _ in figure.labels]
                family = families[name] = GaugeMetricFamily(name, figure.help, labels=labels)
            family.add_metric([value for _, value in figure.labels], figure.value)
        yield from families.values()
