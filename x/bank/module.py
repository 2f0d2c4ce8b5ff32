"""x/bank wired as a module: genesis, message routes, query routes."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.bank.v1beta1 import genesis_pb2, query_pb2, tx_pb2
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from google.protobuf import json_format

from sdk.cli.flags import message_dict
from sdk.coins import coins_from_proto
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrInvalidCoins, ErrNotFound
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.pagination import paginate
from sdk.params import update_params_route
from sdk.invariants import Invariant
from x.bank import invariants, keys, msg_server
from x.bank.keeper import BankKeeper, validate_params

QUERY = "/cosmos.bank.v1beta1.Query/"


class BankModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BankKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return json_format.MessageToDict(genesis_pb2.GenesisState())

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """Balances are credited and the supply is their sum; a stated supply must agree."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        validate_params(genesis.params)
        self.keeper.set_params(ctx, genesis.params)
        for metadata in genesis.denom_metadata:
            self.keeper.set_denom_metadata(ctx, metadata)
        for balance in genesis.balances:
            self.keeper.credit_genesis(ctx, bech32.decode(balance.address), coins_from_proto(balance.coins))
        ctx.events.clear()
        if genesis.supply and coins_from_proto(genesis.supply) != self.keeper.get_total_supply(ctx):
            raise ErrInvalidCoins.wrap("genesis supply does not equal the sum of balances")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """Params, every balance (module accounts' too), the supply and the denom metadata, in key order."""
        k = self.keeper
        return message_dict(genesis_pb2.GenesisState(
            params=k.get_params(ctx), balances=k.all_balances(ctx), supply=k.get_total_supply(ctx).to_proto(),
            denom_metadata=k.all_denom_metadata(ctx),
        ))

    def invariants(self) -> dict[str, Invariant]:
        return {"nonnegative-balances": invariants.nonnegative_balances, "total-supply": invariants.total_supply,
                "supply-accounted": invariants.supply_accounted}

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
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params
            ),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            QUERY + "Balance": QueryRoute(query_pb2.QueryBalanceRequest, self.query_balance, bounded=True),
            QUERY + "AllBalances": QueryRoute(query_pb2.QueryAllBalancesRequest, self.query_all_balances),
            QUERY + "SpendableBalances": QueryRoute(
                query_pb2.QuerySpendableBalancesRequest, self.query_spendable_balances
            ),
            QUERY + "SpendableBalanceByDenom": QueryRoute(
                query_pb2.QuerySpendableBalanceByDenomRequest, self.query_spendable_balance_by_denom
            ),
            QUERY + "TotalSupply": QueryRoute(query_pb2.QueryTotalSupplyRequest, self.query_total_supply),
            QUERY + "SupplyOf": QueryRoute(query_pb2.QuerySupplyOfRequest, self.query_supply_of, bounded=True),
            QUERY + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
            QUERY + "DenomMetadata": QueryRoute(
                query_pb2.QueryDenomMetadataRequest, self.query_denom_metadata, bounded=True
            ),
        }

    def query_supply_of(self, ctx: Context, req: query_pb2.QuerySupplyOfRequest) -> query_pb2.QuerySupplyOfResponse:
        return query_pb2.QuerySupplyOfResponse(amount={"denom": req.denom, "amount": str(self.keeper.get_supply(ctx, req.denom))})

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_denom_metadata(
        self, ctx: Context, req: query_pb2.QueryDenomMetadataRequest
    ) -> query_pb2.QueryDenomMetadataResponse:
        metadata = self.keeper.get_denom_metadata(ctx, req.denom)
        if metadata is None:
            raise ErrNotFound.wrap(f"client metadata for denom {req.denom!r}")
        return query_pb2.QueryDenomMetadataResponse(metadata=metadata)

    def query_balance(self, ctx: Context, req: query_pb2.QueryBalanceRequest) -> query_pb2.QueryBalanceResponse:
        address = _address(req.address)
        amount = self.keeper.get_balance(ctx, address, req.denom)
        return query_pb2.QueryBalanceResponse(balance={"denom": req.denom, "amount": str(amount)})

    def query_all_balances(
        self, ctx: Context, req: query_pb2.QueryAllBalancesRequest
    ) -> query_pb2.QueryAllBalancesResponse:
        entries, page = _balances_page(ctx, _address(req.address), req.pagination)
        balances = [{"denom": denom.decode(), "amount": amount.decode()} for denom, amount in entries]
        return query_pb2.QueryAllBalancesResponse(balances=balances, pagination=page)

    def query_spendable_balances(
        self, ctx: Context, req: query_pb2.QuerySpendableBalancesRequest
    ) -> query_pb2.QuerySpendableBalancesResponse:
        """The denoms are paged as AllBalances pages them; each amount is what the keeper says is spendable."""
        address = _address(req.address)
        entries, page = _balances_page(ctx, address, req.pagination)
        spendable = dict(self.keeper.spendable_coins(ctx, address))
        balances = [
            {"denom": denom.decode(), "amount": str(spendable.get(denom.decode(), 0))} for denom, _ in entries
        ]
        return query_pb2.QuerySpendableBalancesResponse(balances=balances, pagination=page)

    def query_spendable_balance_by_denom(
        self, ctx: Context, req: query_pb2.QuerySpendableBalanceByDenomRequest
    ) -> query_pb2.QuerySpendableBalanceByDenomResponse:
        amount = dict(self.keeper.spendable_coins(ctx, _address(req.address))).get(req.denom, 0)
        return query_pb2.QuerySpendableBalanceByDenomResponse(balance={"denom": req.denom, "amount": str(amount)})

    def query_total_supply(
        self, ctx: Context, req: query_pb2.QueryTotalSupplyRequest
    ) -> query_pb2.QueryTotalSupplyResponse:
        return query_pb2.QueryTotalSupplyResponse(supply=self.keeper.get_total_supply(ctx).to_proto())


def _balances_page(
    ctx: Context, address: bytes, pagination: pagination_pb2.PageRequest
) -> tuple[list[tuple[bytes, bytes]], pagination_pb2.PageResponse]:
    """One page of the address's balances: (denom, amount as decimal text), by denom."""
    return paginate(ctx.kv(keys.STORE_PREFIX), keys.address_balances_prefix(address), pagination)


def _address(text: str) -> bytes:
    try:
        return bech32.decode(text)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(str(exc)) from None
