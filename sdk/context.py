"""The execution context handed to keepers: a state branch, the block being executed and its events."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.gas import GasMeter


class KVStore(Protocol):
    def get(self, key: bytes) -> bytes | None: ...
    def set(self, key: bytes, value: bytes) -> None: ...
    def delete(self, key: bytes) -> None: ...
    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]: ...


class PrefixStore:
    """A module's view of state: every key is silently under the module's own prefix."""

    def __init__(self, parent: KVStore, prefix: bytes) -> None:
        self._parent = parent
        self._prefix = prefix

    def get(self, key: bytes) -> bytes | None:
        return self._parent.get(self._prefix + key)

    def set(self, key: bytes, value: bytes) -> None:
        self._parent.set(self._prefix + key, value)

    def delete(self, key: bytes) -> None:
        self._parent.delete(self._prefix + key)

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        p = self._prefix
        n = len(p)
        for key, value in self._parent.iterate(
            p + prefix,
            None if start is None else p + start,
            None if end is None else p + end,
            reverse,
        ):
            yield key[n:], value


@dataclass(frozen=True)
class BlockHeader:
    """What a state transition may know about the block: all of it agreed by consensus."""

    chain_id: str
    height: int
    time_ns: int
    proposer: bytes = b""


class ExecMode(Enum):
    """Why a transaction runs: CheckTx admits to the mempool (ReCheck re-admits after a block), Simulate
    estimates gas, Finalize executes."""

    CHECK = "check"
    RECHECK = "recheck"
    SIMULATE = "simulate"
    FINALIZE = "finalize"


MEMPOOL_MODES = (ExecMode.CHECK, ExecMode.RECHECK)


@dataclass(slots=True)
class Context:
    store: KVStore
    header: BlockHeader
    mode: ExecMode = ExecMode.FINALIZE
    gas: GasMeter = field(default_factory=GasMeter)
    min_gas_prices: tuple[tuple[str, Fraction], ...] = ()
    events: list[abci.Event] = field(default_factory=list)
    validator_updates: list[abci.ValidatorUpdate] = field(default_factory=list)
    index_events: frozenset[str] = frozenset()
    """The ``type.key`` pairs whose attributes CometBFT indexes (app.toml ``index_events``; empty: all of them).
    Node-local: it never changes results or the app hash, so nodes may differ here."""

    _prefixed: dict[bytes, PrefixStore] = field(default_factory=dict, repr=False)

    def kv(self, prefix: bytes) -> PrefixStore:
        """The module's view of this context's store (one per prefix, reused: keepers call this a lot)."""
        view = self._prefixed.get(prefix)
        if view is None:
            view = self._prefixed[prefix] = PrefixStore(self.store, prefix)
        return view

    def emit(self, type_: str, **attributes: str) -> None:
        if self.mode in MEMPOOL_MODES:  # the mempool never reads events; building them is pure cost
            return
        # Attributes as dicts: upb builds them in place instead of copying EventAttribute objects built first.
        if self.index_events:
            indexed = _index_keys_by_type(self.index_events).get(type_, frozenset())
            pairs = [{"key": key, "value": value, "index": key in indexed} for key, value in attributes.items()]
        else:
            pairs = [{"key": key, "value": value, "index": True} for key, value in attributes.items()]
        self.events.append(abci.Event(type=type_, attributes=pairs))

    def with_store(self, store: KVStore) -> Context:
        """A child context over another branch, sharing the gas meter, collecting its own events."""
        return Context(
            store=store,
            header=self.header,
            mode=self.mode,
            gas=self.gas,
            min_gas_prices=self.min_gas_prices,
            index_events=self.index_events,
        )


@lru_cache(maxsize=8)
def _index_keys_by_type(index_events: frozenset[str]) -> dict[str, frozenset[str]]:
    """``index_events`` as the keys to index of each event type: every event a block emits asks. A pair
    splits at each of its dots, so ``type.key`` matches exactly as the joined text would."""
    keys: dict[str, set[str]] = {}
    for pair in index_events:
        for at, char in enumerate(pair):
            if char == ".":
                keys.setdefault(pair[:at], set()).add(pair[at + 1 :])
    return {type_: frozenset(names) for type_, names in keys.items()}
