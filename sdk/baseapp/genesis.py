"""Genesis: InitChain writes the chain id, the consensus params and every module's genesis state; export
reads every module's state back at a kept height as the app_state of a new genesis."""

from __future__ import annotations

import json
from typing import Any

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.abci.blocks import time_ns
from sdk.baseapp.core import Core
from sdk.baseapp.state import CHAIN_ID_KEY, store_consensus_params, stored_chain_id
from sdk.context import BlockHeader, Context
from sdk.store.cachekv import CacheKV


class Genesis(Core):
    """InitChain and the export of the app state."""

    def init_chain(self, req: abci.RequestInitChain) -> abci.ResponseInitChain:
        app_state: dict[str, Any] = json.loads(req.app_state_bytes) if req.app_state_bytes else {}
        unknown = sorted(set(app_state) - {m.name for m in self.modules})
        if unknown:
            raise ValueError(f"genesis app_state has unknown modules: {', '.join(unknown)}")
        if req.initial_height > 1:  # e.g. an exported chain's next height: store versions stay block heights
            self.store.set_initial_version(req.initial_height)
        state = CacheKV(self.store)
        state.set(CHAIN_ID_KEY, req.chain_id.encode())
        if req.HasField("consensus_params"):  # CometBFT always sends genesis.json's
            store_consensus_params(state, req.consensus_params)
        # Height 0: genesis transactions are signed with account number 0, as in the Cosmos SDK.
        ctx = Context(state, BlockHeader(req.chain_id, 0, time_ns(req.time)))
        for module in self.modules:
            module.init_genesis(ctx, app_state.get(module.name, module.default_genesis()))
        self.pending_genesis = state
        self.genesis_app_hash = self.store.apply(state.changes())
        # The validators the gentxs created; none keeps the set in CometBFT's genesis.json.
        return abci.ResponseInitChain(app_hash=self.genesis_app_hash, validators=ctx.validator_updates)

    def export_app_state(self, height: int | None = None) -> dict[str, Any]:
        """Every module's ``export_genesis`` over the state committed at ``height`` (default: the latest), by
        module name: the app_state of a genesis whose chain starts with the same module state.

        Raises VersionUnavailableError for a height the store no longer keeps (or never had).
        """
        version = self.store.version if height is None else height
        state = CacheKV(self.store.state_at(version))  # a branch: an export never writes to the store
        ctx = Context(state, BlockHeader(stored_chain_id(state), version, 0))
        return {module.name: module.export_genesis(ctx) for module in self.modules}
