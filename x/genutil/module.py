"""x/genutil: genesis transactions (gentxs) delivered at InitChain, after every other module's genesis.

``app_state.genutil.gen_txs`` is a list of base64 ``TxRaw`` bytes, each signed with account number 0
and sequence 0 (as in the Cosmos SDK); a gentx that fails makes the genesis invalid.
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


class GenutilModule(BaseModule):
    name = MODULE_NAME
    store_prefix = b"genutil/"

    def __init__(self, deliver: DeliverTx) -> None:
        self.deliver = deliver

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
