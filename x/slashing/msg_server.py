"""x/slashing messages: a jailed host's operator unjails it (``MsgUnjail``); the authority changes the params."""

from __future__ import annotations

from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as cosmos_tx

from protogen.gonka.slashing.v1 import tx_pb2
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.slashing.keeper import SlashingKeeper
from x.slashing.params import validate_params


def unjail_operator(msg: cosmos_tx.MsgUnjail) -> bytes:
    try:
        return bech32.decode(msg.validator_addr, bech32.VALOPER_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None


def handle_unjail(ctx: Context, slashing: SlashingKeeper, msg: cosmos_tx.MsgUnjail) -> cosmos_tx.MsgUnjailResponse:
    slashing.unjail(ctx, unjail_operator(msg))
    return cosmos_tx.MsgUnjailResponse()


def routes(slashing: SlashingKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(cosmos_tx.MsgUnjail): MsgRoute(
            cosmos_tx.MsgUnjail,
            lambda msg: [unjail_operator(msg)],
            unjail_operator,
            lambda ctx, msg: handle_unjail(ctx, slashing, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, slashing.authority, validate_params, slashing.set_params
        ),
    }
