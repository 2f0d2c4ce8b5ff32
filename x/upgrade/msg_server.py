"""cosmos.upgrade.v1beta1.Msg: SoftwareUpgrade and CancelUpgrade, the authority's (a passed proposal's) alone.

The plan's stateless rules (``validate_plan``) run at CheckTx too and at proposal submission (x/gov checks a
proposal's messages), so a malformed plan is never voted on.
"""

from __future__ import annotations

from cosmpy.protos.cosmos.upgrade.v1beta1 import tx_pb2, upgrade_pb2

from sdk.address import parse_address
from sdk.context import Context
from sdk.module import MsgRoute, type_url
from sdk.params import check_authority
from x.upgrade.errors import ErrInvalidPlan
from x.upgrade.keeper import UpgradeKeeper


def validate_plan(plan: upgrade_pb2.Plan) -> None:
    """The SDK's ``Plan.ValidateBasic``: a name, a positive height, and neither a time (time-based upgrades are
    gone from the SDK) nor an IBC client state (IBC's, which this chain lacks)."""
    if not plan.name:
        raise ErrInvalidPlan.wrap("name cannot be empty")
    if plan.height <= 0:
        raise ErrInvalidPlan.wrap("height must be greater than 0")
    if plan.HasField("time") and (plan.time.seconds or plan.time.nanos):
        raise ErrInvalidPlan.wrap("time-based upgrades have been deprecated in the SDK; set only the height")
    if plan.HasField("upgraded_client_state"):
        raise ErrInvalidPlan.wrap("upgraded_client_state is deprecated in the SDK")


def validate_software_upgrade(msg: tx_pb2.MsgSoftwareUpgrade) -> None:
    parse_address(msg.authority, "authority")
    validate_plan(msg.plan)


def validate_cancel(msg: tx_pb2.MsgCancelUpgrade) -> None:
    parse_address(msg.authority, "authority")


def routes(keeper: UpgradeKeeper) -> dict[str, MsgRoute]:
    def software_upgrade(ctx: Context, msg: tx_pb2.MsgSoftwareUpgrade) -> tx_pb2.MsgSoftwareUpgradeResponse:
        check_authority(keeper.authority, msg.authority)
        keeper.schedule(ctx, msg.plan)
        return tx_pb2.MsgSoftwareUpgradeResponse()

    def cancel(ctx: Context, msg: tx_pb2.MsgCancelUpgrade) -> tx_pb2.MsgCancelUpgradeResponse:
        check_authority(keeper.authority, msg.authority)
        keeper.clear_plan(ctx)
        ctx.emit("cancel_software_upgrade", authority=msg.authority)
        return tx_pb2.MsgCancelUpgradeResponse()

    return {
        type_url(tx_pb2.MsgSoftwareUpgrade): MsgRoute(
            tx_pb2.MsgSoftwareUpgrade,
            lambda m: [parse_address(m.authority, "authority")],
            validate_software_upgrade,
            software_upgrade,
        ),
        type_url(tx_pb2.MsgCancelUpgrade): MsgRoute(
            tx_pb2.MsgCancelUpgrade, lambda m: [parse_address(m.authority, "authority")], validate_cancel, cancel
        ),
    }
