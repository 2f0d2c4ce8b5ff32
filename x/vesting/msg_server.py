"""x/vesting messages: only ``MsgUpdateParams`` (parts are scheduled by other modules through the keeper)."""

from __future__ import annotations

from protogen.gonka.vesting.v1 import tx_pb2
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.vesting.keeper import VestingKeeper
from x.vesting.params import validate_params


def routes(keeper: VestingKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        )
    }
