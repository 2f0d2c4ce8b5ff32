"""x/auth messages: only ``MsgUpdateParams`` (accounts are made by the messages that first pay them)."""

from __future__ import annotations

from cosmpy.protos.cosmos.auth.v1beta1 import tx_pb2

from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.auth.keeper import AccountKeeper
from x.auth.params import validate_params


def routes(keeper: AccountKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, keeper.authority, validate_params, keeper.set_params
        ),
    }
