"""x/pool wired as a module: the community pool's messages in the Cosmos shape
(``cosmos.distribution.v1beta1.MsgFundCommunityPool``, ``MsgCommunityPoolSpend``, ``Query/CommunityPool``),
its params and accounts (``gonka.pool.v1``), genesis and the invariant ``pool/balance-accounted``."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx
from google.protobuf import json_format

from protogen.gonka.pool.v1 import genesis_pb2, pool_pb2, query_pb2, tx_pb2
from sdk.address import parse_address
from sdk.cli.flags import message_dict
from sdk.coins import Coins, coins_from_proto
from sdk.context import Context
from sdk.dec import PRECISION
from sdk.errors import ErrInvalidCoins
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import check_authority, update_params_route
from x.pool import keys
from x.pool.keeper import PoolKeeper
from x.pool.params import default_params, validate_params

COSMOS = "/cosmos.distribution.v1beta1.Query/"
GONKA = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


def positive_coins(coins: Any, what: str) -> Coins:
    """Valid, non-empty coins (``sdk/10`` otherwise)."""
    parsed = coins_from_proto(coins)
    if not parsed:
        raise ErrInvalidCoins.wrap(f"{what} must not be empty")
    return parsed


def dec_coins(coins: Coins) -> list[coin_pb2.DecCoin]:
    """Coins as ``DecCoin``s the way the Cosmos SDK puts a LegacyDec on the wire: the value × 10^18 in
    digits (1ngonka is ``1000000000000000000``; its JSON gateway prints ``1.000000000000000000``)."""
    return [coin_pb2.DecCoin(denom=denom, amount=str(amount * 10**PRECISION)) for denom, amount in coins]


def validate_fund(msg: distribution_tx.MsgFundCommunityPool) -> None:
    parse_address(msg.depositor, "depositor")
    positive_coins(msg.amount, "amount")


def validate_spend(msg: distribution_tx.MsgCommunityPoolSpend) -> None:
    parse_address(msg.authority, "authority")
    parse_address(msg.recipient, "recipient")
    positive_coins(msg.amount, "amount")


class PoolModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: PoolKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.pool.v1.GenesisState``: the params (default if left out) and an exported chain's totals;
        bank's genesis (imported before) must hold exactly inflows − spent in the ``pool`` account."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        for total in genesis.inflows:
            k.set_inflow(ctx, total.source, coins_from_proto(total.amount))
        k.set_spent(ctx, coins_from_proto(genesis.spent))
        error = k.balance_accounted(ctx)
        if error:
            raise ValueError(f"pool genesis: {error}")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        return message_dict(genesis_pb2.GenesisState(
            params=k.get_params(ctx),
            inflows=[pool_pb2.SourceTotal(source=s, amount=c.to_proto()) for s, c in k.inflows(ctx).items()],
            spent=k.spent(ctx).to_proto(),
        ))

    def invariants(self) -> dict[str, Invariant]:
        return {"balance-accounted": self.keeper.balance_accounted}

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(distribution_tx.MsgFundCommunityPool): MsgRoute(
                distribution_tx.MsgFundCommunityPool, lambda msg: [parse_address(msg.depositor, "depositor")],
                validate_fund, self.handle_fund),
            type_url(distribution_tx.MsgCommunityPoolSpend): MsgRoute(
                distribution_tx.MsgCommunityPoolSpend, lambda msg: [parse_address(msg.authority, "authority")],
                validate_spend, self.handle_spend),
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params),
        }

    def handle_fund(
        self, ctx: Context, msg: distribution_tx.MsgFundCommunityPool
    ) -> distribution_tx.MsgFundCommunityPoolResponse:
        self.keeper.fund(ctx, parse_address(msg.depositor, "depositor"), positive_coins(msg.amount, "amount"),
                         keys.SOURCE_FUND)
        return distribution_tx.MsgFundCommunityPoolResponse()

    def handle_spend(
        self, ctx: Context, msg: distribution_tx.MsgCommunityPoolSpend
    ) -> distribution_tx.MsgCommunityPoolSpendResponse:
        check_authority(self.keeper.authority, msg.authority)
        self.keeper.spend(ctx, parse_address(msg.recipient, "recipient"), positive_coins(msg.amount, "amount"))
        return distribution_tx.MsgCommunityPoolSpendResponse()

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            COSMOS + "CommunityPool": QueryRoute(
                distribution_query.QueryCommunityPoolRequest, self.query_community_pool, bounded=True),
            GONKA + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            GONKA + "Totals": QueryRoute(query_pb2.QueryTotalsRequest, self.query_totals, bounded=True),
        }

    def query_community_pool(
        self, ctx: Context, req: distribution_query.QueryCommunityPoolRequest
    ) -> distribution_query.QueryCommunityPoolResponse:
        return distribution_query.QueryCommunityPoolResponse(pool=dec_coins(self.keeper.balance(ctx)))

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_totals(self, ctx: Context, req: query_pb2.QueryTotalsRequest) -> query_pb2.QueryTotalsResponse:
        k = self.keeper
        return query_pb2.QueryTotalsResponse(
            balance=k.balance(ctx).to_proto(),
            inflows=[pool_pb2.SourceTotal(source=s, amount=c.to_proto()) for s, c in k.inflows(ctx).items()],
            spent=k.spent(ctx).to_proto())
