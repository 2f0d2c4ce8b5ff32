"""x/rewards wired as a module: epoch rewards (its epoch hook is the keeper), params, genesis, queries and
the invariant ``rewards/minted-within-cap``."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.rewards.v1 import genesis_pb2, query_pb2, tx_pb2
from sdk.address import parse_address
from sdk.cli.flags import message_dict
from sdk.coins import coins_from_proto, make_coins, parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.rewards import keys
from x.rewards.keeper import RewardsKeeper
from x.rewards.params import amount, default_params, validate_params

GONKA = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


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


class RewardsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: RewardsKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params(), minted="0"))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.rewards.v1.GenesisState``: the params (default if left out) and, for an exported chain,
        what was minted (at most the cap), the work reported for epochs not yet paid and each host's total."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        minted = _genesis_amount(genesis.minted, "minted")
        if minted > amount(params, "issuance_cap"):
            raise ValueError(f"rewards genesis: minted {minted} exceeds the issuance cap {params.issuance_cap}")
        k.set_minted(ctx, minted)
        for entry in genesis.work:
            k.set_work(ctx, entry.epoch, _genesis_address(entry.host), _genesis_amount(entry.units, "work units"))
        for total in genesis.hosts:
            try:
                coins = coins_from_proto(total.rewarded)
            except ABCIError as err:
                raise ValueError(f"rewards genesis: host {total.host}: {err.log}") from None
            k.add_host_rewarded(ctx, _genesis_address(total.host), coins)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        return message_dict(genesis_pb2.GenesisState(
            params=k.get_params(ctx), minted=str(k.minted(ctx)), work=k.all_work(ctx),
            hosts=[genesis_pb2.HostTotal(host=bech32.encode(h), rewarded=c.to_proto())
                   for h, c in k.host_totals(ctx).items()],
        ))

    def invariants(self) -> dict[str, Invariant]:
        return {"minted-within-cap": self.keeper.minted_within_cap}

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, k.authority, validate_params, k.update_params)}

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            GONKA + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            GONKA + "NextIssuance": QueryRoute(query_pb2.QueryNextIssuanceRequest, self.query_next, bounded=True),
            GONKA + "HostRewards": QueryRoute(query_pb2.QueryHostRewardsRequest, self.query_host, bounded=True),
            GONKA + "Minted": QueryRoute(query_pb2.QueryMintedRequest, self.query_minted, bounded=True),
        }

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_next(
        self, ctx: Context, req: query_pb2.QueryNextIssuanceRequest
    ) -> query_pb2.QueryNextIssuanceResponse:
        """What the end of the current epoch (of the last committed block) mints."""
        epoch = self.keeper.epochs.current_epoch(ctx).number
        minted, uncapped = self.keeper.issuance(ctx, epoch)
        return query_pb2.QueryNextIssuanceResponse(epoch=epoch, amount=str(minted), uncapped=str(uncapped),
                                                   denom=self.keeper.get_params(ctx).mint_denom)

    def query_host(
        self, ctx: Context, req: query_pb2.QueryHostRewardsRequest
    ) -> query_pb2.QueryHostRewardsResponse:
        host = parse_address(req.host, "host")
        rewarded = dict(self.keeper.host_rewarded(ctx, host))
        pending = {d: min(a, rewarded.get(d, 0)) for d, a in self.keeper.host_pending(ctx, host)}
        vested = make_coins([(d, a - pending.get(d, 0)) for d, a in rewarded.items() if a > pending.get(d, 0)])
        return query_pb2.QueryHostRewardsResponse(
            rewarded=make_coins(list(rewarded.items())).to_proto(),
            pending=make_coins([(d, a) for d, a in pending.items() if a]).to_proto(), vested=vested.to_proto())

    def query_minted(self, ctx: Context, req: query_pb2.QueryMintedRequest) -> query_pb2.QueryMintedResponse:
        params = self.keeper.get_params(ctx)
        minted, cap = self.keeper.minted(ctx), amount(params, "issuance_cap")
        return query_pb2.QueryMintedResponse(minted=str(minted), cap=str(cap), remaining=str(max(0, cap - minted)),
                                             denom=params.mint_denom)
