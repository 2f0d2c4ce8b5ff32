"""Module consensus versions and the migrations between them, as the Cosmos SDK's ``RunMigrations`` runs them.

Every module states its ``consensus_version`` (sdk/module.py); the chain stores the version each module's
state is at (x/upgrade). An upgrade's handler calls ``run_migrations`` with the stored versions: each module
in app order goes through every migration from its stored version up to the binary's, one version at a time.
A module the stored versions lack is new to the chain: its default genesis is imported instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sdk.context import Context
from sdk.module import Module

VersionMap = dict[str, int]
"""Module name -> consensus version."""


class MigrationError(Exception):
    """The binary cannot bring a module's state to its consensus version: the upgrade must not apply."""


def consensus_versions(modules: Sequence[Module]) -> VersionMap:
    """What this binary's modules are at, by name in app order."""
    return {module.name: module.consensus_version for module in modules}


def run_migrations(ctx: Context, modules: Sequence[Module], from_versions: Mapping[str, int]) -> VersionMap:
    """Bring every module from ``from_versions`` to its consensus version in ``ctx``; the new versions.

    Raises MigrationError for a missing step or a stored version above the binary's (a downgrade): nothing
    may be half-migrated, so the caller's block must not commit.
    """
    for module in modules:
        if module.name not in from_versions:
            module.init_genesis(ctx, module.default_genesis())
            continue
        version, target = from_versions[module.name], module.consensus_version
        if version > target:
            raise MigrationError(f"module {module.name} is at version {version}, above this binary's {target}")
        steps = module.migrations()
        for step in range(version, target):
            if step not in steps:
                raise MigrationError(f"module {module.name} has no migration from version {step} to {step + 1}")
            steps[step](ctx)
    return consensus_versions(modules)
