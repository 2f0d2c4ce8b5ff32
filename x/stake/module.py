"""x/stake wired as a module: MsgCreateValidator and the validator set CometBFT runs with."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2, tx_pb2
from google.protobuf import json_format

from protogen.gonka.stake.v1 import genesis_pb2, query_pb2, stake_pb2
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx

from sdk.cli.flags import message_dict
from sdk.coins import parse_amount
from sdk.consensus import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.stake import keys, msg_server
from x.stake.keeper import StakeKeeper
from x.stake.params import default_params, validate_params

QUERY = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


class StakeModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: StakeKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.stake.v1.GenesisState``: the params (the defaults if left out) and, for an exported chain,
        its validators (a new chain's arrive as gentxs, x/genutil, after every module's genesis), with
        collateral the bonded pool (bank's genesis) must hold; they become InitChain's validator set."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        self.keeper.set_params(ctx, params)
        seen: set[bytes] = set()
        for validator in genesis.validators:
            operator, pubkey = _check_genesis_validator(validator, params)
            if operator in seen or pubkey in seen:
                raise ValueError(f"stake genesis validator {validator.operator_address}: operator or key repeated")
            seen.update((operator, pubkey))
            self.keeper.set_validator(ctx, validator)
        if genesis.validators:
            bonded, pool = sum(int(v.tokens) for v in genesis.validators), self.keeper.bonded_pool_balance(ctx)
            if bonded != pool:
                raise ValueError(f"stake genesis validators hold {bonded}{params.bond_denom} of collateral, "
                                 f"but the bonded pool {pool}{params.bond_denom}")
        ctx.validator_updates.extend(self.keeper.apply_validator_set_updates(ctx))  # recorded as sent

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        """The block's validator set changes, as one diff against the set last sent to CometBFT."""
        ctx.validator_updates.extend(self.keeper.apply_validator_set_updates(ctx))

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """The params and every validator with its collateral and consensus key (the key index is rebuilt on
        import)."""
        return message_dict(
            genesis_pb2.GenesisState(params=self.keeper.get_params(ctx), validators=self.keeper.validators(ctx))
        )

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgCreateValidator): MsgRoute(
                tx_pb2.MsgCreateValidator, msg_server.create_validator_signers, msg_server.validate_create_validator,
                lambda ctx, msg: msg_server.handle_create_validator(ctx, k, msg),
            ),
            type_url(stake_tx.MsgUpdateParams): update_params_route(
                stake_tx.MsgUpdateParams, k.authority, validate_params, k.set_params
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return {QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True)}

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))


def _check_genesis_validator(validator: staking_pb2.Validator, params: stake_pb2.Params) -> tuple[bytes, bytes]:
    """A genesis validator as MsgCreateValidator would have made it: (operator, consensus key)."""
    what = f"stake genesis validator {validator.operator_address!r}"
    try:
        operator = bech32.decode(validator.operator_address, bech32.VALOPER_PREFIX)
        pubkey = msg_server.ed25519_key(validator.consensus_pubkey)
        tokens = parse_amount(validator.tokens, "tokens")
    except (ABCIError, ValueError) as err:
        raise ValueError(f"{what}: {err.log if isinstance(err, ABCIError) else err}") from None
    if tokens < params.power_reduction or validator.status != staking_pb2.BOND_STATUS_BONDED:
        raise ValueError(f"{what}: must be bonded with at least one unit of power ({params.power_reduction}) "
                         "of collateral")
    return operator, pubkey
