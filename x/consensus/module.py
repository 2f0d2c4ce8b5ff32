"""x/consensus: CometBFT's consensus params (block size and gas limits, evidence, validator key types, vote
extensions) changed by the authority, as the Cosmos SDK's x/consensus does.

The params are framework state (``baseapp/consensus_params``, written at InitChain from genesis.json's
``consensus_params``); an update is written there, and BaseApp returns the block's new params to CometBFT in
``ResponseFinalizeBlock.consensus_param_updates``. The module keeps no state of its own.
"""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.module import BaseModule, MsgRoute
from x.consensus import genesis, keys, msg_server


class ConsensusModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, authority: bytes) -> None:
        """``authority``: who may change the params (``cosmos.consensus.v1.MsgUpdateParams``)."""
        self.authority = authority

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis()

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.authority)
