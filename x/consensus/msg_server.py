"""x/consensus messages: ``cosmos.consensus.v1.MsgUpdateParams``, the authority replacing CometBFT's params."""

from __future__ import annotations

from cosmpy.protos.cosmos.consensus.v1 import tx_pb2
from cosmpy.protos.tendermint.types import params_pb2

from sdk.baseapp import store_consensus_params, stored_consensus_params
from sdk.context import Context
from sdk.errors import ErrInvalidRequest
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.consensus.params import proposed_params, validate_params, validate_vote_extensions_update


def apply(ctx: Context, proposed: params_pb2.ConsensusParams) -> None:
    """Block, evidence and validator params replaced; abci replaced only if given; version kept (the app
    version is not the authority's to change)."""
    current = stored_consensus_params(ctx.store) or params_pb2.ConsensusParams()
    if proposed.HasField("abci"):
        try:
            validate_vote_extensions_update(
                current.abci.vote_extensions_enable_height,
                proposed.abci.vote_extensions_enable_height,
                ctx.header.height,
            )
        except ValueError as exc:
            raise ErrInvalidRequest.wrap(f"invalid params: {exc}") from None
    updated = params_pb2.ConsensusParams()
    updated.CopyFrom(current)
    for section in ("block", "evidence", "validator", "abci"):
        if proposed.HasField(section):
            getattr(updated, section).CopyFrom(getattr(proposed, section))
    store_consensus_params(ctx.store, updated)


def routes(authority: bytes) -> dict[str, MsgRoute]:
    """``authority``: who may change the params."""
    return {
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, authority, validate_params, apply, params_of=proposed_params
        ),
    }
