"""x/upgrade genesis: the module versions (every module's consensus version the state is at), the plans
applied and the scheduled plan, so that a chain started from an export carries them::

    {"module_versions": [{"name": "auth", "version": "1"}, …],
     "applied": [{"name": "v2", "height": "1200"}], "plan": {"name": "v3", "height": "5000", "info": "…"}}

All may be left out (a new chain: the versions recorded are this binary's). Versions given must be this
binary's exactly: state exported by a binary at other versions is another binary's to import.
"""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.upgrade.v1beta1 import upgrade_pb2
from google.protobuf import json_format

from sdk.cli.flags import message_dict
from sdk.context import Context
from x.upgrade.keeper import UpgradeKeeper
from x.upgrade.msg_server import validate_plan

FIELDS = {"module_versions", "applied", "plan"}


def init_genesis(ctx: Context, keeper: UpgradeKeeper, state: dict[str, Any]) -> None:
    unknown = sorted(set(state) - FIELDS)
    if unknown:
        raise ValueError(f"upgrade genesis: unknown fields {', '.join(unknown)}")
    binary = keeper.binary_versions()
    if "module_versions" in state:
        given = {
            v.name: v.version
            for v in (json_format.ParseDict(item, upgrade_pb2.ModuleVersion()) for item in state["module_versions"])
        }
        if given != binary:
            raise ValueError(f"upgrade genesis: module_versions {given} are not this binary's {binary}")
    keeper.set_module_versions(ctx, binary)
    for item in state.get("applied", []):
        height = int(item["height"])
        if not item["name"] or height <= 0:
            raise ValueError(f"upgrade genesis: applied plan {item} needs a name and a positive height")
        keeper.set_done(ctx, item["name"], height)
    if "plan" in state:
        plan = json_format.ParseDict(state["plan"], upgrade_pb2.Plan())
        validate_plan(plan)
        keeper.schedule(ctx, plan)


def export_genesis(ctx: Context, keeper: UpgradeKeeper) -> dict[str, Any]:
    state: dict[str, Any] = {
        "module_versions": [
            message_dict(upgrade_pb2.ModuleVersion(name=n, version=v)) for n, v in keeper.module_versions(ctx).items()
        ],
        "applied": [{"name": name, "height": str(height)} for name, height in keeper.applied(ctx)],
    }
    plan = keeper.plan(ctx)
    if plan is not None:
        state["plan"] = message_dict(plan)
    return state
