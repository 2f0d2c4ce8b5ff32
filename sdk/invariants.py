"""Invariants: properties of the whole state that must hold after every block, each registered by the
module that owns the state, under the name ``module/name`` (as the Cosmos SDK's crisis module names them).

A node that checks them (``gonkad start --check-invariants``; the in-process test chain always does)
halts at the first block after which one is broken, naming it: a chain that goes on from a state its own
rules call impossible would only spread the damage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sdk.context import Context

Invariant = Callable[[Context], "str | None"]
"""Reads the state; returns None when the property holds, else one line saying how it is broken."""


class InvariantBroken(Exception):
    """The state breaks a registered invariant: the node must stop, not commit the block."""

    def __init__(self, height: int, broken: list[str]) -> None:
        self.broken = broken
        super().__init__(f"invariant broken after block {height}: {'; '.join(broken)}")


def broken_invariants(ctx: Context, invariants: Mapping[str, Invariant]) -> list[str]:
    """``name: reason`` of every broken invariant, in registration order."""
    found = []
    for name, invariant in invariants.items():
        reason = invariant(ctx)
        if reason is not None:
            found.append(f"{name}: {reason}")
    return found
