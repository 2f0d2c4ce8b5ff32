"""x/upgrade's refusals (codespace ``upgrade``, the Cosmos SDK's codes where it has one), the two ways a
plan's height stops the node and the binary a node must not start with.

A wrong authority is ``gov/13``, as for every module's params update (sdk/params.py).
"""

from __future__ import annotations

from sdk.errors import register

UPGRADE = "upgrade"
ErrUpgradeScheduled = register(UPGRADE, 2, "upgrade cannot be scheduled in the past")
ErrUpgradeCompleted = register(UPGRADE, 3, "upgrade has already been completed")
ErrNoModuleVersionFound = register(UPGRADE, 4, "module version not found")
ErrInvalidPlan = register(UPGRADE, 100, "invalid upgrade plan")
"""Gonka's own: the SDK answers these (empty name, no height, a time) with ``sdk/18``."""


class UpgradeHalt(Exception):
    """A plan's height stops this node before the block runs: nothing of the block is committed, and the node
    exits non-zero (``gonkad start`` halts on it as on a broken invariant)."""


class UpgradeNeeded(UpgradeHalt):
    """This binary has no handler for the plan due now: another binary must run the block."""

    def __init__(self, name: str, height: int, detail: str) -> None:
        self.name = name
        self.height = height
        super().__init__(f'UPGRADE "{name}" NEEDED at height {height}: {detail}')


class UpgradeFailed(UpgradeHalt):
    """The plan's handler raised: the upgrade cannot apply with this binary, and the chain must not go on
    without it."""

    def __init__(self, name: str, height: int, cause: Exception) -> None:
        self.name = name
        self.height = height
        super().__init__(f'UPGRADE "{name}" FAILED at height {height}: {type(cause).__name__}: {cause}')


class BinaryTooNew(UpgradeHalt):
    """At start-up: this binary carries a plan the chain has not reached yet; the old binary must run until
    the plan's height."""

    def __init__(self, name: str, height: int, last: int) -> None:
        self.name = name
        self.height = height
        super().__init__(
            f'UPGRADE "{name}" is scheduled at height {height} but the chain is at {last}: this binary already '
            "carries it; run the current binary until the node halts there"
        )
