"""x/stake wired as a module: MsgCreateValidator and the validator set CometBFT runs with."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2

from sdk.context import Context
from sdk.module import BaseModule, MsgRoute, type_url
from x.stake import keys, msg_server
from x.stake.keeper import StakeKeeper


class StakeModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: StakeKeeper) -> None:
        self.keeper = keeper

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """Validators arrive as gentxs (x/genutil), after every module's genesis."""
        if state:
            raise ValueError("stake genesis takes no state yet; validators come from gentxs")

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgCreateValidator): MsgRoute(
                tx_pb2.MsgCreateValidator, msg_server.create_validator_signers, msg_server.validate_create_validator,
                lambda ctx, msg: msg_server.handle_create_validator(ctx, k, msg),
            ),
        }
