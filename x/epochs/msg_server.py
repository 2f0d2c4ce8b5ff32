"""x/epochs messages: only ``MsgUpdateParams`` (epochs advance by block height, not by message)."""

from __future__ import annotations

from protogen.gonka.epochs.v1 import tx_pb2
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.epochs.keeper import EpochsKeeper
from x.epochs.params import validate_params


def routes(keeper: EpochsKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        )
    }
