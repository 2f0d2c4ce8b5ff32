"""Deterministic gas: every store access and every tx byte has a fixed price, as in the Cosmos SDK.

The prices are the Cosmos SDK's KVGasConfig defaults, so wallets' gas estimates carry over.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sdk.errors import ErrOutOfGas
from sdk.store.cachekv import CacheKV

INFINITE = (1 << 63) - 1
DEFAULT_SIMULATION_GAS_LIMIT = 20_000_000
"""Most gas one simulation may use (app.toml ``simulation_gas_limit``): simulations are free to ask for,
so this bounds the work one asks of the node. It covers the largest admissible tx (1 MiB at 10 gas a
byte is 10.5M gas for size alone) plus ~9.5M gas of execution (~450 sends to new accounts), while a
3,000-message send (63M gas) is refused; a bank send needs ~35-50k."""


@dataclass(frozen=True)
class GasConfig:
    has_cost: int = 1000
    delete_cost: int = 1000
    read_cost_flat: int = 1000
    read_cost_per_byte: int = 3
    write_cost_flat: int = 2000
    write_cost_per_byte: int = 30
    iter_next_cost_flat: int = 30


KV_GAS = GasConfig()


class GasMeter:
    """Counts gas against a limit; crossing the limit raises ErrOutOfGas at once."""

    __slots__ = ("limit", "consumed")

    def __init__(self, limit: int = INFINITE) -> None:
        self.limit = limit
        self.consumed = 0

    def consume(self, amount: int, descriptor: str) -> None:
        self.consumed += amount
        if self.consumed > self.limit:
            raise ErrOutOfGas.wrap(
                f"out of gas in location: {descriptor}; gasWanted: {self.limit}, gasUsed: {self.consumed}"
            )


class GasKV:
    """A store wrapper that charges the meter for each read, write, delete and iteration step."""

    __slots__ = ("_parent", "_meter")

    def __init__(self, parent: CacheKV, meter: GasMeter) -> None:
        self._parent = parent
        self._meter = meter

    def scratch(self) -> GasKV:
        """A throwaway branch metered by the same meter: what a step would cost, its writes never kept."""
        return GasKV(CacheKV(self._parent), self._meter)

    def get(self, key: bytes) -> bytes | None:
        value = self._parent.get(key)
        self._meter.consume(
            KV_GAS.read_cost_flat + KV_GAS.read_cost_per_byte * (len(key) + len(value or b"")), "ReadFlat"
        )
        return value

    def set(self, key: bytes, value: bytes) -> None:
        self._meter.consume(KV_GAS.write_cost_flat + KV_GAS.write_cost_per_byte * (len(key) + len(value)), "WriteFlat")
        self._parent.set(key, value)

    def delete(self, key: bytes) -> None:
        self._meter.consume(KV_GAS.delete_cost, "Delete")
        self._parent.delete(key)

    def iterate(
        self, prefix: bytes = b"", start: bytes | None = None, end: bytes | None = None, reverse: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        for key, value in self._parent.iterate(prefix, start, end, reverse):
            self._meter.consume(
                KV_GAS.iter_next_cost_flat + KV_GAS.read_cost_per_byte * (len(key) + len(value)), "IterNext"
            )
            yield key, value
