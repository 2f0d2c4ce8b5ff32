"""x/genutil: genesis transactions (gentxs) delivered at InitChain, after every other module's genesis.

``app_state.genutil.gen_txs`` is a list of base64 ``TxRaw`` bytes, each signed with account number 0
and sequence 0 (as in the Cosmos SDK); a gentx that fails makes the genesis invalid. After the gentxs, the
validator set they made is taken from the stake keeper (``validator_set_updates``, as the Cosmos SDK's
genutil asks staking) and becomes InitChain's validators. Export writes none: the state the gentxs made is
in the other modules' exports.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.context import Context
from sdk.module import BaseModule

MODULE_NAME = "genutil"
DeliverTx = Callable[[Context, bytes], abci.ExecTxResult]
ValidatorSetUpdates = Callable[[Context], list[abci.ValidatorUpdate]]


class GenutilModule(BaseModule):
    name = MODULE_NAME
    store_prefix = b"genutil/"

    def __init__(self, deliver: DeliverTx, validator_set_updates: ValidatorSetUpdates) -> None:
        self.deliver = deliver
        self.validator_set_updates = validator_set_updates

    def default_genesis(self) -> dict[str, Any]:
        return {"gen_txs": []}

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        for i, encoded in enumerate(state.get("gen_txs", [])):
            try:
                raw = base64.b64decode(encoded, validate=True)
            except (binascii.Error, TypeError):
                raise ValueError(f"gentx {i} is not base64") from None
            result = self.deliver(ctx, raw)
            if result.code:
                raise ValueError(f"gentx {i} failed: {result.codespace}/{result.code} {result.log}")
        ctx.validator_updates.extend(self.validator_set_updates(ctx))  # recorded as sent to CometBFT

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """No gentxs: they were applied, and the state they made is in the other modules' exports."""
        return self.default_genesis()
