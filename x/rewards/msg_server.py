"""x/rewards messages: only ``MsgUpdateParams`` (rewards are minted and paid at epoch ends, not by message)."""

from __future__ import annotations

from protogen.gonka.rewards.v1 import tx_pb2
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.rewards.keeper import RewardsKeeper
from x.rewards.params import validate_params


def routes(keeper: RewardsKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.update_params
        )
    }
