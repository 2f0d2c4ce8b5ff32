"""x/genutil: genesis transactions (gentxs) delivered at InitChain, after every other module's genesis.

``app_state.genutil.gen_txs`` is a list of base64 ``TxRaw`` bytes, each signed with account number 0
and sequence 0 (as in the Cosmos SDK); a gentx that fails makes the genesis invalid. After the gentxs, the
validator set they made is taken from the stake keeper (``validator_set_updates``, as the Cosmos SDK's
genutil asks staking) and becomes InitChain's validators. Export writes none: the state the gentxs made is
in the other modules' exports.
"""

from __future__ import annotations

from typing import Any

from sdk.context import Context
from sdk.module import BaseModule
from x.genutil import genesis, keys


class GenutilModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, deliver: genesis.DeliverTx, validator_set_updates: genesis.ValidatorSetUpdates) -> None:
        self.deliver = deliver
        self.validator_set_updates = validator_set_updates

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.deliver, self.validator_set_updates, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis()
