"""TEST ONLY: the upgrade a test binary carries (``gonkad start --test-upgrade NAME``), so that tests can
rehearse a real upgrade with the same code on both sides of it.

With it, the binary has a handler for the plan ``NAME`` (the default: every module's migrations), and
x/upgrade's own consensus version is 2, its 1 → 2 migration recording the applied name ``NAME-migrated`` at
the height it ran, which ``query upgrade applied NAME-migrated`` shows. No production binary sets it.
"""

from __future__ import annotations

from sdk.context import Context
from sdk.module import Migration
from x.upgrade.keeper import UpgradeKeeper

REHEARSAL_CONSENSUS_VERSION = 2


def rehearsal_marker(name: str) -> str:
    """The applied name the test migration records for the plan ``name``."""
    return f"{name}-migrated"


def rehearsal_migrations(keeper: UpgradeKeeper, name: str) -> dict[int, Migration]:
    """x/upgrade's migration from version 1 to 2 in a test binary."""

    def migrate_1_to_2(ctx: Context) -> None:
        keeper.set_done(ctx, rehearsal_marker(name), ctx.header.height)

    return {1: migrate_1_to_2}
