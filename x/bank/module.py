"""x/bank wired as a module: genesis, message routes, query routes."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.bank.v1beta1 import genesis_pb2, query_pb2, tx_pb2
from google.protobuf import json_format

from gonkad.coins import coins_from_proto
from gonkad.context import Context
from gonkad.crypto import bech32
from gonkad.errors import ErrInvalidAddress, ErrInvalidCoins
from gonkad.module import MsgRoute, QueryRoute, type_url
from x.bank import keys, msg_server
from x.bank.keeper import BankKeeper

QUERY = "/cosmos.bank.v1beta1.Query/"


class BankModule:
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BankKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return json_format.MessageToDict(genesis_pb2.GenesisState())

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """Balances are credited and the supply is their sum; a stated supply must agree."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        for metadata in genesis.denom_metadata:
            self.keeper.set_denom_metadata(ctx, metadata)
        for balance in genesis.balances:
            self.keeper.mint_coins(ctx, bech32.decode(balance.address), coins_from_proto(balance.coins))
        ctx.events.clear()
        if genesis.supply and coins_from_proto(genesis.supply) != self.keeper.get_total_supply(ctx):
            raise ErrInvalidCoins.wrap("genesis supply does not equal the sum of balances")

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgSend): MsgRoute(
                tx_pb2.MsgSend, msg_server.send_signers, msg_server.validate_send,
                lambda ctx, msg: msg_server.handle_send(ctx, k, msg),
            ),
            type_url(tx_pb2.MsgMultiSend): MsgRoute(
                tx_pb2.MsgMultiSend, msg_server.multi_send_signers, msg_server.validate_multi_send,
                lambda ctx, msg: msg_server.handle_multi_send(ctx, k, msg),
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Balance": QueryRoute(query_pb2.QueryBalanceRequest, self.query_balance),
            QUERY + "AllBalances": QueryRoute(query_pb2.QueryAllBalancesRequest, self.query_all_balances),
            QUERY + "TotalSupply": QueryRoute(query_pb2.QueryTotalSupplyRequest, self.query_total_supply),
        }

    def query_balance(self, ctx: Context, req: query_pb2.QueryBalanceRequest) -> query_pb2.QueryBalanceResponse:
        address = _address(req.address)
        amount = self.keeper.get_balance(ctx, address, req.denom)
        return query_pb2.QueryBalanceResponse(balance={"denom": req.denom, "amount": str(amount)})

    def query_all_balances(
        self, ctx: Context, req: query_pb2.QueryAllBalancesRequest
    ) -> query_pb2.QueryAllBalancesResponse:
        coins = self.keeper.get_all_balances(ctx, _address(req.address))
        return query_pb2.QueryAllBalancesResponse(balances=coins.to_proto())

    def query_total_supply(
        self, ctx: Context, req: query_pb2.QueryTotalSupplyRequest
    ) -> query_pb2.QueryTotalSupplyResponse:
        return query_pb2.QueryTotalSupplyResponse(supply=self.keeper.get_total_supply(ctx).to_proto())

    def begin_block(self, ctx: Context) -> None:
        return None

    def end_block(self, ctx: Context) -> None:
        return None


def _address(text: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(str(exc)) from None
