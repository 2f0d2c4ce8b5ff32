"""x/slashing wired as a module: begin block reads the block's evidence and last commit; MsgUnjail; the
``cosmos.slashing.v1beta1`` queries."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.slashing.v1beta1 import genesis_pb2 as cosmos_genesis
from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.slashing.v1beta1 import slashing_pb2
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as cosmos_tx
from google.protobuf import json_format

from protogen.gonka.slashing.v1 import genesis_pb2, query_pb2, tx_pb2
from sdk.address import module_address
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrNotFound
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.pagination import paginate
from sdk.params import update_params_route
from x.slashing import keys
from x.slashing.keeper import SlashingKeeper
from x.slashing.params import cosmos_params, default_params, validate_params

COSMOS = "/cosmos.slashing.v1beta1.Query/"
GONKA = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


def unjail_operator(msg: cosmos_tx.MsgUnjail) -> bytes:
    try:
        return bech32.decode(msg.validator_addr, bech32.VALOPER_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None


def consensus_address_of(text: str) -> bytes:
    try:
        return bech32.decode(text, bech32.VALCONS_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"consensus address: {exc}") from None


class SlashingModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: SlashingKeeper) -> None:
        self.keeper = keeper

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.slashing.v1.GenesisState``: the params (default if left out), and an exported chain's
        signing records and missed blocks."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        self.keeper.set_params(ctx, params)
        for entry in genesis.signing_infos:
            self.keeper.set_signing_info(ctx, consensus_address_of(entry.address), entry.validator_signing_info)
        for entry in genesis.missed_blocks:
            address = consensus_address_of(entry.address)
            for block in entry.missed_blocks:
                if not 0 <= block.index < params.signed_blocks_window:
                    raise ValueError(f"slashing genesis: missed block index {block.index} outside the window")
                self.keeper.set_missed(ctx, address, block.index, block.missed)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        genesis = genesis_pb2.GenesisState(params=k.get_params(ctx))
        for address, info in k.signing_infos(ctx):
            text = bech32.encode(address, bech32.VALCONS_PREFIX)
            genesis.signing_infos.add(address=text, validator_signing_info=info)
            missed = k.missed_indices(ctx, address)
            if missed:
                genesis.missed_blocks.add(address=text, missed_blocks=[
                    cosmos_genesis.MissedBlock(index=i, missed=True) for i in missed])
        return message_dict(genesis)

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.begin_block(ctx, block)

    def invariants(self) -> dict[str, Invariant]:
        return {"slashed-coins-settled": self.slashed_coins_settled}

    def slashed_coins_settled(self, ctx: Context) -> str | None:
        """Every slash pays out or burns all it takes within the slash: its module account stays empty."""
        pool = module_address(keys.SLASHED_POOL)  # read only: an invariant must not create the account
        denom = self.keeper.stake.get_params(ctx).bond_denom
        held = self.keeper.bank.get_balance(ctx, pool, denom)
        return None if held == 0 else f"{keys.SLASHED_POOL} module account holds {held}{denom}"

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(cosmos_tx.MsgUnjail): MsgRoute(
                cosmos_tx.MsgUnjail, lambda msg: [unjail_operator(msg)], unjail_operator,
                self.handle_unjail,
            ),
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params),
        }

    def handle_unjail(self, ctx: Context, msg: cosmos_tx.MsgUnjail) -> cosmos_tx.MsgUnjailResponse:
        self.keeper.unjail(ctx, unjail_operator(msg))
        return cosmos_tx.MsgUnjailResponse()

    def query_routes(self) -> dict[str, QueryRoute]:
        return {
            COSMOS + "Params": QueryRoute(cosmos_query.QueryParamsRequest, self.query_cosmos_params, bounded=True),
            COSMOS + "SigningInfo": QueryRoute(cosmos_query.QuerySigningInfoRequest, self.query_signing_info,
                                               bounded=True),
            COSMOS + "SigningInfos": QueryRoute(cosmos_query.QuerySigningInfosRequest, self.query_signing_infos),
            GONKA + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.query_params, bounded=True),
        }

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def query_cosmos_params(
        self, ctx: Context, req: cosmos_query.QueryParamsRequest
    ) -> cosmos_query.QueryParamsResponse:
        return cosmos_query.QueryParamsResponse(params=cosmos_params(self.keeper.get_params(ctx)))

    def query_signing_info(
        self, ctx: Context, req: cosmos_query.QuerySigningInfoRequest
    ) -> cosmos_query.QuerySigningInfoResponse:
        info = self.keeper.signing_info(ctx, consensus_address_of(req.cons_address))
        if info is None:
            raise ErrNotFound.wrap(f"no signing info for {req.cons_address}")
        return cosmos_query.QuerySigningInfoResponse(val_signing_info=info)

    def query_signing_infos(
        self, ctx: Context, req: cosmos_query.QuerySigningInfosRequest
    ) -> cosmos_query.QuerySigningInfosResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.SIGNING_INFO_PREFIX, req.pagination)
        return cosmos_query.QuerySigningInfosResponse(
            info=[slashing_pb2.ValidatorSigningInfo.FromString(v) for _, v in entries], pagination=page)
