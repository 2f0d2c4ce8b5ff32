"""``gonkad tx upgrade software-upgrade|cancel-software-upgrade`` (submitted as gov proposals, as the SDK's
are) and ``gonkad query upgrade plan|applied NAME|module-versions|authority``."""

from __future__ import annotations

import argparse

from cosmpy.protos.cosmos.upgrade.v1beta1 import query_pb2, tx_pb2

from sdk.cli.proposal import add_proposal_flags, submit_as_proposal
from sdk.cli.query import add_module_query
from sdk.crypto import bech32
from sdk.module import type_url
from sdk.params import GOV_AUTHORITY
from sdk.services import cosmos


def cmd_software_upgrade(args: argparse.Namespace) -> None:
    if args.upgrade_height <= 0:
        raise ValueError("--upgrade-height must be a positive block height")
    plan = {"name": args.name, "height": str(args.upgrade_height), "info": args.upgrade_info}
    message = {"@type": type_url(tx_pb2.MsgSoftwareUpgrade), "authority": bech32.encode(GOV_AUTHORITY), "plan": plan}
    submit_as_proposal(args, [message])


def cmd_cancel(args: argparse.Namespace) -> None:
    submit_as_proposal(args, [{"@type": type_url(tx_pb2.MsgCancelUpgrade), "authority": bech32.encode(GOV_AUTHORITY)}])


def register_tx(modules: argparse._SubParsersAction) -> None:
    upgrade = modules.add_parser("upgrade", help="software upgrades, by governance").add_subparsers(
        dest="upgrade_command", required=True
    )
    p = upgrade.add_parser(
        "software-upgrade", help="propose the upgrade NAME at a height: software-upgrade NAME --upgrade-height H"
    )
    p.add_argument("name")
    p.add_argument("--upgrade-height", type=int, required=True, help="the block the new binary runs first")
    p.add_argument("--upgrade-info", default="", help="for operators and Cosmovisor, e.g. the binaries' URLs")
    add_proposal_flags(p, "Software upgrade")
    p.set_defaults(func=cmd_software_upgrade)
    p = upgrade.add_parser("cancel-software-upgrade", help="propose cancelling the scheduled upgrade")
    add_proposal_flags(p, "Cancel the software upgrade")
    p.set_defaults(func=cmd_cancel)


def register_query(modules: argparse._SubParsersAction) -> None:
    prefix = cosmos("upgrade").query
    upgrade = modules.add_parser("upgrade", help="software upgrades").add_subparsers(
        dest="upgrade_command", required=True
    )
    add_module_query(
        upgrade,
        "plan",
        "the scheduled upgrade plan (none: {})",
        prefix + "CurrentPlan",
        query_pb2.QueryCurrentPlanRequest,
        query_pb2.QueryCurrentPlanResponse,
    )
    add_module_query(
        upgrade,
        "applied",
        "the height the upgrade NAME was applied at (none: {})",
        prefix + "AppliedPlan",
        query_pb2.QueryAppliedPlanRequest,
        query_pb2.QueryAppliedPlanResponse,
        fields=("name",),
    )
    add_module_query(
        upgrade,
        "module-versions",
        "every module's consensus version, as the chain stores it",
        prefix + "ModuleVersions",
        query_pb2.QueryModuleVersionsRequest,
        query_pb2.QueryModuleVersionsResponse,
    )
    add_module_query(
        upgrade,
        "authority",
        "who may schedule and cancel upgrades",
        prefix + "Authority",
        query_pb2.QueryAuthorityRequest,
        query_pb2.QueryAuthorityResponse,
    )
