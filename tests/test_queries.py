"""Module queries through ABCI Query by their gRPC method paths, with pagination."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_q
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_q
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message

from app import GonkaApp
from gonkad import genesis
from sdk.crypto import secp256k1
from sdk.store.commitstore import CommitStore
from sdk.client.txbuilder import address_of

KEYS = [secp256k1.PrivateKey(bytes([i + 1]) * 32) for i in range(7)]


@pytest.fixture
def app(tmp_path: Path) -> GonkaApp:
    app = GonkaApp(CommitStore(str(tmp_path / "db")))
    state = genesis.default_app_state()
    for i, key in enumerate(KEYS):
        state = genesis.add_genesis_account(state, address_of(key), [("ngonka", 1000 + i), (f"utoken{i}", 5)])
    app.init_chain(abci.RequestInitChain(chain_id="q", initial_height=1, app_state_bytes=json.dumps(state).encode()))
    app.finalize_block(abci.RequestFinalizeBlock(height=1))
    app.commit(abci.RequestCommit())
    return app


def query(app: GonkaApp, path: str, request: Message, response_type: type) -> Message:
    reply = app.query(abci.RequestQuery(path=path, data=request.SerializeToString()))
    assert reply.code == 0, reply.log
    return response_type.FromString(reply.value)


def test_bank_supply_params_and_metadata(app: GonkaApp) -> None:
    supply = query(app, "/cosmos.bank.v1beta1.Query/SupplyOf", bank_q.QuerySupplyOfRequest(denom="ngonka"),
                   bank_q.QuerySupplyOfResponse)
    assert int(supply.amount.amount) == sum(1000 + i for i in range(len(KEYS)))
    params = query(app, "/cosmos.bank.v1beta1.Query/Params", bank_q.QueryParamsRequest(), bank_q.QueryParamsResponse)
    assert params.params.default_send_enabled
    meta = query(app, "/cosmos.bank.v1beta1.Query/DenomMetadata", bank_q.QueryDenomMetadataRequest(denom="ngonka"),
                 bank_q.QueryDenomMetadataResponse)
    assert (meta.metadata.symbol, meta.metadata.display, meta.metadata.denom_units[1].exponent) == ("GNK", "gonka", 9)
    missing = app.query(abci.RequestQuery(path="/cosmos.bank.v1beta1.Query/DenomMetadata",
                                          data=bank_q.QueryDenomMetadataRequest(denom="nope").SerializeToString()))
    assert missing.code == 38


def test_accounts_paginate_by_key_and_offset(app: GonkaApp) -> None:
    path = "/cosmos.auth.v1beta1.Query/Accounts"
    everything = query(app, path, auth_q.QueryAccountsRequest(), auth_q.QueryAccountsResponse)
    total = len(everything.accounts)
    assert total == len(KEYS) + 1  # and the fee collector
    seen, key = [], b""
    while True:
        page = query(app, path, auth_q.QueryAccountsRequest(
            pagination=pagination_pb2.PageRequest(key=key, limit=3, count_total=True)), auth_q.QueryAccountsResponse)
        assert page.pagination.total == (0 if key else total)  # counted on the first page only
        seen += list(page.accounts)
        key = page.pagination.next_key
        if not key:
            break
    assert seen == list(everything.accounts)
    offset = query(app, path, auth_q.QueryAccountsRequest(pagination=pagination_pb2.PageRequest(offset=5, limit=2)),
                   auth_q.QueryAccountsResponse)
    assert list(offset.accounts) == list(everything.accounts)[5:7]
    bad = app.query(abci.RequestQuery(path=path, data=auth_q.QueryAccountsRequest(
        pagination=pagination_pb2.PageRequest(key=b"x", offset=1)).SerializeToString()))
    assert bad.code == 18 and "either a key or an offset" in bad.log


def test_all_balances_pages(app: GonkaApp) -> None:
    request = bank_q.QueryAllBalancesRequest(address=address_of(KEYS[3]), pagination=pagination_pb2.PageRequest(limit=1))
    first = query(app, "/cosmos.bank.v1beta1.Query/AllBalances", request, bank_q.QueryAllBalancesResponse)
    assert [(c.denom, c.amount) for c in first.balances] == [("ngonka", "1003")]
    request.pagination.key = first.pagination.next_key
    second = query(app, "/cosmos.bank.v1beta1.Query/AllBalances", request, bank_q.QueryAllBalancesResponse)
    assert [(c.denom, c.amount) for c in second.balances] == [("utoken3", "5")] and not second.pagination.next_key
