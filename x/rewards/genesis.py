"""x/rewards genesis: params, what was minted, the work reported for epochs not yet paid and each host's total."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.rewards.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.coins import coins_from_proto, parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from x.rewards.keeper import RewardsKeeper
from x.rewards.params import amount, default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params(), minted="0"))


def init_genesis(ctx: Context, keeper: RewardsKeeper, state: dict[str, Any]) -> None:
    """``gonka.rewards.v1.GenesisState``: the params (default if left out) and, for an exported chain,
    what was minted (at most the cap), the work reported for epochs not yet paid and each host's total."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    minted = _genesis_amount(genesis.minted, "minted")
    if minted > amount(params, "issuance_cap"):
        raise ValueError(f"rewards genesis: minted {minted} exceeds the issuance cap {params.issuance_cap}")
    keeper.set_minted(ctx, minted)
    for entry in genesis.work:
        keeper.set_work(ctx, entry.epoch, _genesis_address(entry.host), _genesis_amount(entry.units, "work units"))
    for total in genesis.hosts:
        try:
            coins = coins_from_proto(total.rewarded)
        except ABCIError as err:
            raise ValueError(f"rewards genesis: host {total.host}: {err.log}") from None
        keeper.add_host_rewarded(ctx, _genesis_address(total.host), coins)


def export_genesis(ctx: Context, keeper: RewardsKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            minted=str(keeper.minted(ctx)),
            work=keeper.all_work(ctx),
            hosts=[
                genesis_pb2.HostTotal(host=bech32.encode(h), rewarded=c.to_proto())
                for h, c in keeper.host_totals(ctx).items()
            ],
        )
    )


def _genesis_amount(text: str, what: str) -> int:
    try:
        return parse_amount(text or "0", what)
    except ABCIError as err:
        raise ValueError(f"rewards genesis: {err.log}") from None


def _genesis_address(text: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as err:
        raise ValueError(f"rewards genesis: host {text!r}: {err}") from None
