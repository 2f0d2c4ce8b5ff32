"""x/stake wired as a module: hosts and collateral, and the validator set CometBFT runs with."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2
from google.protobuf import json_format

from protogen.gonka.stake.v1 import genesis_pb2, stake_pb2
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx
from sdk.cli.flags import message_dict
from sdk.coins import parse_amount
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.stake import invariants, keys, msg_server
from x.stake.keeper import StakeKeeper
from x.stake.params import default_params, validate_params
from x.stake.query_server import StakeQueries


class StakeModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: StakeKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.stake.v1.GenesisState``: the params (default if left out) and, for an exported chain, its
        hosts, unbonding entries, weights and validator set, whose collateral the pools (bank's genesis)
        must hold; the set becomes InitChain's. A new chain's hosts arrive as gentxs (x/genutil)."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        seen: set[bytes] = set()
        for host in genesis.hosts:
            operator = _check_genesis_host(host)
            if operator in seen or host.consensus_pubkey in seen:
                raise ValueError(f"stake genesis host {host.operator}: operator or consensus key repeated")
            seen.update((operator, host.consensus_pubkey))
            k.set_host(ctx, host)
        store = ctx.kv(keys.STORE_PREFIX)
        for entry in genesis.unbonding_entries:
            store.set(keys.unbonding_key(entry.completion_epoch, _genesis_operator(entry.operator, seen),
                                         entry.creation_height),
                      entry.SerializeToString())
        k.set_epoch_weights(ctx, genesis.weights_epoch,
                            {_genesis_operator(w.operator, seen): w.weight for w in genesis.weights})
        k.set_validator_powers(ctx, {_genesis_operator(p.operator, seen): p.weight for p in genesis.powers if p.weight})
        if genesis.hosts or genesis.unbonding_entries:
            error = invariants.collateral_held(k, ctx)
            if error:
                raise ValueError(f"stake genesis: {error}")
        ctx.validator_updates.extend(k.apply_validator_set_updates(ctx))  # recorded as sent

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        epoch = k.weights_epoch(ctx)
        weights = k.epoch_weights(ctx, epoch) if epoch is not None else {}
        return message_dict(genesis_pb2.GenesisState(
            params=k.get_params(ctx), hosts=k.hosts(ctx), unbonding_entries=k.unbonding_entries(ctx),
            weights_epoch=epoch or 0,
            weights=[stake_pb2.HostWeight(operator=bech32.encode(op), weight=w) for op, w in weights.items()],
            powers=[stake_pb2.HostWeight(operator=bech32.encode(op), weight=p)
                    for op, p in k.validator_powers(ctx).items()],
        ))

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        """The block's validator set changes (a set-validators stage, a jailing), as one diff against the
        set last sent to CometBFT; a block that wrote no power table sends nothing (nothing else changes it)."""
        if self.keeper.power_table_written:
            ctx.validator_updates.extend(self.keeper.apply_validator_set_updates(ctx))
            self.keeper.power_table_written = False  # only once sent: a failed diff is tried again next block

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "collateral-held": lambda ctx: invariants.collateral_held(k, ctx),
            "power-table-sent": lambda ctx: invariants.power_table_sent(k, ctx),
            "jailed-out-of-set": lambda ctx: invariants.jailed_out_of_set(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgCreateValidator): MsgRoute(
                tx_pb2.MsgCreateValidator, msg_server.create_validator_signers, msg_server.validate_create_validator,
                lambda ctx, msg: msg_server.handle_create_validator(ctx, k, msg),
            ),
            type_url(stake_tx.MsgEditHost): MsgRoute(
                stake_tx.MsgEditHost, msg_server.operator_signers, msg_server.validate_edit_host,
                lambda ctx, msg: msg_server.handle_edit_host(ctx, k, msg),
            ),
            type_url(stake_tx.MsgDepositCollateral): MsgRoute(
                stake_tx.MsgDepositCollateral, msg_server.operator_signers, msg_server.validate_collateral_msg,
                lambda ctx, msg: msg_server.handle_deposit(ctx, k, msg),
            ),
            type_url(stake_tx.MsgWithdrawCollateral): MsgRoute(
                stake_tx.MsgWithdrawCollateral, msg_server.operator_signers, msg_server.validate_collateral_msg,
                lambda ctx, msg: msg_server.handle_withdraw(ctx, k, msg),
            ),
            type_url(stake_tx.MsgUpdateParams): update_params_route(
                stake_tx.MsgUpdateParams, k.authority, validate_params, k.set_params
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return StakeQueries(self.keeper).routes()


def _check_genesis_host(host: stake_pb2.Host) -> bytes:
    """A genesis host as registration would have made it: its operator."""
    what = f"stake genesis host {host.operator!r}"
    try:
        operator = bech32.decode(host.operator)
        parse_amount(host.collateral, "collateral")
    except (ABCIError, ValueError) as err:
        raise ValueError(f"{what}: {err.log if isinstance(err, ABCIError) else err}") from None
    if len(host.consensus_pubkey) != 32:
        raise ValueError(f"{what}: consensus key must be 32 bytes (ed25519)")
    return operator


def _genesis_operator(address: str, hosts: set[bytes]) -> bytes:
    operator = bech32.decode(address)
    if operator not in hosts:
        raise ValueError(f"stake genesis names {address}, which is not a host")
    return operator
