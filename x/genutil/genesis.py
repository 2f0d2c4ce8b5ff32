"""x/genutil genesis: ``app_state.genutil.gen_txs``, base64 ``TxRaw`` bytes delivered in order at InitChain."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.context import Context

DeliverTx = Callable[[Context, bytes], abci.ExecTxResult]
ValidatorSetUpdates = Callable[[Context], list[abci.ValidatorUpdate]]


def default_genesis() -> dict[str, Any]:
    return {"gen_txs": []}


def init_genesis(
    ctx: Context, deliver: DeliverTx, validator_set_updates: ValidatorSetUpdates, state: dict[str, Any]
) -> None:
    """Each gentx delivered as a transaction; one that fails makes the genesis invalid. The validator set they
    made becomes InitChain's."""
    for i, encoded in enumerate(state.get("gen_txs", [])):
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError):
            raise ValueError(f"gentx {i} is not base64") from None
        result = deliver(ctx, raw)
        if result.code:
            raise ValueError(f"gentx {i} failed: {result.codespace}/{result.code} {result.log}")
    ctx.validator_updates.extend(validator_set_updates(ctx))  # recorded as sent to CometBFT


def export_genesis() -> dict[str, Any]:
    """No gentxs: they were applied, and the state they made is in the other modules' exports."""
    return default_genesis()
