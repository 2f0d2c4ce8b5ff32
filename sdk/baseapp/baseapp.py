"""BaseApp: the ABCI state machine every module plugs into, joined from its phases and built here from
the modules (their store prefixes, routes, invariants and node-local config)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from sdk.baseapp.core import AnteHandler
from sdk.baseapp.genesis import Genesis
from sdk.baseapp.proposals import Proposals
from sdk.baseapp.queries import Queries
from sdk.baseapp.state import STORE_PREFIX
from sdk.baseapp.statesync import StateSync
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT
from sdk.module import Module
from sdk.prepared import PreparedCache
from sdk.snapshots.manager import SnapshotManager
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore


class BaseApp(StateSync, Proposals, Queries, Genesis):
    """Routes ABCI calls to the modules; the app constructor (``app.py``) decides which modules."""

    def __init__(
        self,
        store: CommitStore,
        modules: Sequence[Module],
        ante: AnteHandler,
        min_gas_prices: tuple[tuple[str, Fraction], ...] = (),
        index_events: frozenset[str] = frozenset(),
        name: str = "gonka",
        simulation_gas_limit: int = DEFAULT_SIMULATION_GAS_LIMIT,
        check_invariants: bool = False,
        module_config: Mapping[str, Mapping[str, Any]] | None = None,
        snapshots: SnapshotManager | None = None,
    ) -> None:
        """``check_invariants``: check every module's invariants after each block and halt on a broken one.
        ``module_config``: node-local settings by module name (from the node's home, never from state),
        handed to each module's ``configure`` once, here. ``snapshots``: takes and serves the node's state-sync
        snapshots (none without)."""
        self.store = store
        self.simulation_gas_limit = simulation_gas_limit
        self.min_gas_prices = min_gas_prices
        self.index_events = index_events
        self.modules = list(modules)
        self.ante = ante
        self.name = name
        self.msg_routes = {}
        self.query_routes = self.framework_query_routes()
        self._register_modules()
        self._configure_modules(module_config or {})
        self.pending_genesis = None
        self.genesis_app_hash = b""
        self.check_state = CacheKV(store)
        self.prepared = PreparedCache(self.prepare)
        self._last_check_header = None
        self.check_invariants = check_invariants
        self.snapshots = snapshots
        self.restoring = None
        self.invariants = {
            f"{module.name}/{name}": invariant
            for module in self.modules
            for name, invariant in module.invariants().items()
        }

    def _register_modules(self) -> None:
        """Each module's message and query routes; no two modules' store prefixes (nor the framework's) may
        overlap, and no route may be registered twice."""
        prefixes: set[bytes] = {STORE_PREFIX}
        for module in self.modules:
            if any(p.startswith(module.store_prefix) or module.store_prefix.startswith(p) for p in prefixes):
                raise ValueError(f"module {module.name} store prefix {module.store_prefix!r} overlaps another")
            prefixes.add(module.store_prefix)
            _merge_routes(self.msg_routes, module.msg_routes(), module.name)
            _merge_routes(self.query_routes, module.query_routes(), module.name)

    def _configure_modules(self, configs: Mapping[str, Mapping[str, Any]]) -> None:
        """Hand each module its node-local table (empty without one); a table for a module the app lacks is
        an error, not ignored."""
        unknown_config = sorted(set(configs) - {m.name for m in self.modules})
        if unknown_config:
            raise ValueError(f"node-local config for unknown modules: {', '.join(unknown_config)}")
        for module in self.modules:
            module.configure(configs.get(module.name, {}))


def _merge_routes(into: dict[str, Any], new: dict[str, Any], module: str) -> None:
    for route in new:
        if route in into:
            raise ValueError(f"route {route} registered twice (module {module})")
    into.update(new)
