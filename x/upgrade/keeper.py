"""x/upgrade's state: the scheduled plan, the plans applied (name -> height) and every module's consensus
version; and what a plan's height does (``pre_block``): apply it with this binary's handler, or halt.

The handlers come from the binary (``app.py``), never from state: whether a node has one is what tells an
old binary from the new one. A node without the plan's handler writes ``data/upgrade-info.json`` (the path
is node-local, given by ``configure``) for Cosmovisor and halts before the block runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from cosmpy.protos.cosmos.upgrade.v1beta1 import upgrade_pb2

from sdk.context import Context
from sdk.migrations import VersionMap, consensus_versions, run_migrations
from sdk.module import Module
from sdk.params import GOV_AUTHORITY
from x.upgrade import keys
from x.upgrade.errors import BinaryTooNew, ErrUpgradeCompleted, ErrUpgradeScheduled, UpgradeFailed, UpgradeNeeded

log = logging.getLogger("gonkad.upgrade")

UpgradeHandler = Callable[[Context, upgrade_pb2.Plan, VersionMap], VersionMap]
"""What a binary does at the plan it carries (the SDK's ``UpgradeHandler``): given the stored module versions,
migrate the state and return the versions it is now at."""


class UpgradeKeeper:
    """Owns the ``upgrade/`` prefix."""

    def __init__(self, authority: bytes = GOV_AUTHORITY) -> None:
        self.authority = authority
        self.handlers: dict[str, UpgradeHandler] = {}
        self.modules: Sequence[Module] = ()
        self.info_file: Path | None = None
        """Where this node writes ``upgrade-info.json`` when it halts for a plan (None: it writes none)."""

    def set_modules(self, modules: Sequence[Module]) -> None:
        """The app's modules in app order, whose versions the chain records and migrations run."""
        self.modules = modules

    def set_handlers(self, handlers: Mapping[str, UpgradeHandler]) -> None:
        self.handlers = dict(handlers)

    def migrate_all(self, ctx: Context, plan: upgrade_pb2.Plan, from_versions: VersionMap) -> VersionMap:
        """The default handler: every module's migrations from its stored version to this binary's."""
        return run_migrations(ctx, self.modules, from_versions)

    # --- the plan -------------------------------------------------------------------------------------

    def plan(self, ctx: Context) -> upgrade_pb2.Plan | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PLAN_KEY)
        return None if raw is None else upgrade_pb2.Plan.FromString(raw)

    def schedule(self, ctx: Context, plan: upgrade_pb2.Plan) -> None:
        """Schedule ``plan`` (checked without state already), replacing any scheduled one, as the SDK does."""
        if plan.height <= ctx.header.height:
            raise ErrUpgradeScheduled.wrap(f"height {plan.height} is not after the current height {ctx.header.height}")
        if self.done_height(ctx, plan.name):
            raise ErrUpgradeCompleted.wrap(f"upgrade with name {plan.name} has already been completed")
        ctx.kv(keys.STORE_PREFIX).set(keys.PLAN_KEY, plan.SerializeToString())
        ctx.emit("software_upgrade", name=plan.name, height=str(plan.height))

    def clear_plan(self, ctx: Context) -> None:
        ctx.kv(keys.STORE_PREFIX).delete(keys.PLAN_KEY)

    # --- applied plans --------------------------------------------------------------------------------

    def done_height(self, ctx: Context, name: str) -> int:
        """The height ``name`` was applied at; 0 if never."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.done_key(name))
        return 0 if raw is None else keys.decode_uint(raw)

    def set_done(self, ctx: Context, name: str, height: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.done_key(name), keys.encode_uint(height))

    def applied(self, ctx: Context) -> list[tuple[str, int]]:
        """Every applied plan's name and height, by name."""
        store = ctx.kv(keys.STORE_PREFIX)
        n = len(keys.DONE_PREFIX)
        return [(k[n:].decode(), keys.decode_uint(v)) for k, v in store.iterate(keys.DONE_PREFIX)]

    # --- module versions ------------------------------------------------------------------------------

    def module_versions(self, ctx: Context) -> VersionMap:
        """The stored consensus versions, by module name (in name order)."""
        store = ctx.kv(keys.STORE_PREFIX)
        n = len(keys.VERSION_PREFIX)
        return {k[n:].decode(): keys.decode_uint(v) for k, v in store.iterate(keys.VERSION_PREFIX)}

    def set_module_versions(self, ctx: Context, versions: Mapping[str, int]) -> None:
        """Replace the stored versions with ``versions`` (a module left out is removed)."""
        store = ctx.kv(keys.STORE_PREFIX)
        for name in list(self.module_versions(ctx)):
            if name not in versions:
                store.delete(keys.version_key(name))
        for name in sorted(versions):
            store.set(keys.version_key(name), keys.encode_uint(versions[name]))

    def binary_versions(self) -> VersionMap:
        """This binary's modules' consensus versions."""
        return consensus_versions(self.modules)

    # --- a plan's height ------------------------------------------------------------------------------

    def pre_block(self, ctx: Context) -> None:
        """At the plan's height, before anything else of the block: apply it with this binary's handler (the
        handler, the versions, the plan marked applied and cleared: all the block's, committed with it), or
        halt (UpgradeNeeded) if the binary has none, or (UpgradeFailed) if the handler raises."""
        plan = self.plan(ctx)
        if plan is None or ctx.header.height < plan.height:
            return
        handler = self.handlers.get(plan.name)
        if handler is None:
            self._halt_for(plan, ctx.header.height)
        try:
            versions = handler(ctx, plan, self.module_versions(ctx))
        except Exception as exc:  # noqa: BLE001 - any failure halts: the block must not go on without it
            log.critical('UPGRADE "%s" failed at height %d', plan.name, ctx.header.height, exc_info=exc)
            raise UpgradeFailed(plan.name, ctx.header.height, exc) from exc
        self.set_module_versions(ctx, versions)
        self.set_done(ctx, plan.name, ctx.header.height)
        self.clear_plan(ctx)
        ctx.emit("upgrade_applied", name=plan.name, height=str(ctx.header.height))
        log.info('applied upgrade "%s" at height %d', plan.name, ctx.header.height)

    def _halt_for(self, plan: upgrade_pb2.Plan, height: int) -> NoReturn:
        """Log the SDK's line, write ``upgrade-info.json`` for Cosmovisor, raise UpgradeNeeded."""
        halt = UpgradeNeeded(plan.name, height, plan.info)
        log.critical("%s", halt)
        if self.info_file is not None:
            write_upgrade_info(self.info_file, plan.name, height, plan.info)
        raise halt

    def refuse_unknown(self, ctx: Context) -> None:
        """At start-up, ``ctx`` over the last committed block: a node that halted at a plan's height (the next
        block is the plan's) and still has no handler for it must not start (UpgradeNeeded); nor one whose
        binary already carries a plan still blocks away (BinaryTooNew, the SDK's "BINARY UPDATED BEFORE
        TRIGGER"): its new rules would run before the chain agreed to them."""
        plan = self.plan(ctx)
        if plan is None:
            return
        due = plan.height == ctx.header.height + 1
        if due and plan.name not in self.handlers:
            raise UpgradeNeeded(plan.name, plan.height, "this binary has no handler for it")
        if not due and plan.name in self.handlers:
            raise BinaryTooNew(plan.name, plan.height, ctx.header.height)


def write_upgrade_info(path: Path, name: str, height: int, info: str) -> None:
    """``{"name":…,"height":…,"info":…}`` as the SDK's ``DumpUpgradeInfoToDisk`` writes it (Go's
    ``json.Marshal``, empty fields left out) and Cosmovisor reads it."""
    fields: dict[str, str | int] = {"name": name, "height": height}
    if info:
        fields["info"] = info
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields, separators=(",", ":")))
    path.chmod(0o600)
