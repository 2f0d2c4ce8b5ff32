"""x/consensus: CometBFT's consensus params (block size and gas limits, evidence, validator key types, vote
extensions) changed by the authority, as the Cosmos SDK's x/consensus does.

The params are framework state (``baseapp/consensus_params``, written at InitChain from genesis.json's
``consensus_params``); an update is written there, and BaseApp returns the block's new params to CometBFT in
``ResponseFinalizeBlock.consensus_param_updates``. The module keeps no state of its own.
"""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.consensus.v1 import tx_pb2
from cosmpy.protos.tendermint.types import params_pb2

from sdk.baseapp import store_consensus_params, stored_consensus_params
from sdk.context import Context
from sdk.errors import ErrInvalidRequest
from sdk.module import BaseModule, MsgRoute, type_url
from sdk.params import update_params_route
from x.consensus.params import proposed_params, validate_params, validate_vote_extensions_update

MODULE_NAME = "consensus"


class ConsensusModule(BaseModule):
    name = MODULE_NAME
    store_prefix = b"consensus/"  # holds nothing: the params live under the framework's baseapp/

    def __init__(self, authority: bytes) -> None:
        """``authority``: who may change the params (``cosmos.consensus.v1.MsgUpdateParams``)."""
        self.authority = authority

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """The params come from genesis.json's ``consensus_params`` (InitChain), never from app_state."""
        if state:
            raise ValueError("consensus genesis takes no app_state: the params are genesis.json's consensus_params")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """Nothing: ``gonkad export`` writes the stored consensus params as the genesis' ``consensus_params``."""
        return {}

    def msg_routes(self) -> dict[str, MsgRoute]:
        return {
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, self.authority, validate_params, self.apply, params_of=proposed_params
            ),
        }

    def apply(self, ctx: Context, proposed: params_pb2.ConsensusParams) -> None:
        """Block, evidence and validator params replaced; abci replaced only if given; version kept (the app
        version is not the authority's to change)."""
        current = stored_consensus_params(ctx.store) or params_pb2.ConsensusParams()
        if proposed.HasField("abci"):
            try:
                validate_vote_extensions_update(
                    current.abci.vote_extensions_enable_height, proposed.abci.vote_extensions_enable_height,
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
