"""What every phase of BaseApp reads: the modules in app order, their routes, the stores and the node's
own settings, declared once here; ``baseapp.py`` sets them, the phase files use them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from fractions import Fraction

from sdk.abci.application import Application
from sdk.baseapp.state import stored_chain_id
from sdk.context import BlockHeader, Context
from sdk.invariants import Invariant
from sdk.module import Module, MsgRoute, QueryRoute
from sdk.prepared import PreparedCache
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore
from sdk.tx import Tx

log = logging.getLogger("gonkad.app")

AnteHandler = Callable[[Context, Tx, list[bytes]], None]


class Core(Application):
    """BaseApp's fields and the few helpers more than one phase needs."""

    store: CommitStore
    modules: list[Module]
    ante: AnteHandler
    name: str
    min_gas_prices: tuple[tuple[str, Fraction], ...]
    """This node's minimum gas prices (app.toml): CheckTx refuses a lower fee; never part of state."""
    index_events: frozenset[str]
    simulation_gas_limit: int
    check_invariants: bool
    msg_routes: dict[str, MsgRoute]
    query_routes: dict[str, QueryRoute]
    invariants: dict[str, Invariant]
    pending_genesis: CacheKV | None
    """InitChain's state until the first block's FinalizeBlock commits it."""
    genesis_app_hash: bytes
    check_state: CacheKV
    """The mempool's branch of the committed state, reset at each Commit."""
    prepared: PreparedCache
    _last_check_header: BlockHeader | None

    @property
    def chain_id(self) -> str:
        return stored_chain_id(self.pending_genesis or self.store)

    def header_app_hash(self) -> bytes:
        """The app hash the next block's header carries: the last committed root, or InitChain's before the
        first block (whose FinalizeBlock commits the genesis state)."""
        return self.genesis_app_hash if self.pending_genesis is not None else self.store.root_hash

    def module_named(self, name: str) -> Module:
        for module in self.modules:
            if module.name == name:
                return module
        raise ValueError(f"no module {name!r}")
