"""x/stake genesis: params and, for an exported chain, hosts, unbonding entries, weights and the validator set."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.stake.v1 import genesis_pb2, stake_pb2
from sdk.cli.flags import message_dict
from sdk.coins import parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from x.stake import invariants, keys
from x.stake.keeper import StakeKeeper
from x.stake.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: StakeKeeper, state: dict[str, Any]) -> None:
    """``gonka.stake.v1.GenesisState``: the params (default if left out) and, for an exported chain, its
    hosts, unbonding entries, weights and validator set, whose collateral the pools (bank's genesis)
    must hold; the set becomes InitChain's. A new chain's hosts arrive as gentxs (x/genutil)."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    seen: set[bytes] = set()
    for host in genesis.hosts:
        operator = _check_genesis_host(host)
        if operator in seen or host.consensus_pubkey in seen:
            raise ValueError(f"stake genesis host {host.operator}: operator or consensus key repeated")
        seen.update((operator, host.consensus_pubkey))
        keeper.set_host(ctx, host)
    store = ctx.kv(keys.STORE_PREFIX)
    for entry in genesis.unbonding_entries:
        store.set(
            keys.unbonding_key(entry.completion_epoch, _genesis_operator(entry.operator, seen), entry.creation_height),
            entry.SerializeToString(),
        )
    keeper.set_epoch_weights(
        ctx, genesis.weights_epoch, {_genesis_operator(w.operator, seen): w.weight for w in genesis.weights}
    )
    keeper.set_validator_powers(
        ctx, {_genesis_operator(p.operator, seen): p.weight for p in genesis.powers if p.weight}
    )
    if genesis.hosts or genesis.unbonding_entries:
        error = invariants.collateral_held(keeper, ctx)
        if error:
            raise ValueError(f"stake genesis: {error}")
    ctx.validator_updates.extend(keeper.apply_validator_set_updates(ctx))  # recorded as sent


def export_genesis(ctx: Context, keeper: StakeKeeper) -> dict[str, Any]:
    epoch = keeper.weights_epoch(ctx)
    weights = keeper.epoch_weights(ctx, epoch) if epoch is not None else {}
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            hosts=keeper.hosts(ctx),
            unbonding_entries=keeper.unbonding_entries(ctx),
            weights_epoch=epoch or 0,
            weights=[stake_pb2.HostWeight(operator=bech32.encode(op), weight=w) for op, w in weights.items()],
            powers=[
                stake_pb2.HostWeight(operator=bech32.encode(op), weight=p)
                for op, p in keeper.validator_powers(ctx).items()
            ],
        )
    )


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
