"""Module queries through ABCI Query by their gRPC method paths, with pagination."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_q
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_q
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1

KEYS = [secp256k1.PrivateKey(bytes([i + 1]) * 32) for i in range(7)]


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    accounts = {address_of(key): [("ngonka", 1000 + i), (f"utoken{i}", 5)] for i, key in enumerate(KEYS)}
    with InProcessChain(tmp_path / "db", accounts, chain_id="q") as chain:
        yield chain


def test_bank_supply_params_and_metadata(chain: InProcessChain) -> None:
    supply = chain.query(
        "/cosmos.bank.v1beta1.Query/SupplyOf", bank_q.QuerySupplyOfRequest(denom="ngonka"), bank_q.QuerySupplyOfResponse
    )
    assert int(supply.amount.amount) == sum(1000 + i for i in range(len(KEYS)))
    params = chain.query("/cosmos.bank.v1beta1.Query/Params", bank_q.QueryParamsRequest(), bank_q.QueryParamsResponse)
    assert params.params.default_send_enabled
    meta = chain.query(
        "/cosmos.bank.v1beta1.Query/DenomMetadata",
        bank_q.QueryDenomMetadataRequest(denom="ngonka"),
        bank_q.QueryDenomMetadataResponse,
    )
    assert (meta.metadata.symbol, meta.metadata.display, meta.metadata.denom_units[1].exponent) == ("GNK", "gonka", 9)
    missing = chain.app.query(
        abci.RequestQuery(
            path="/cosmos.bank.v1beta1.Query/DenomMetadata",
            data=bank_q.QueryDenomMetadataRequest(denom="nope").SerializeToString(),
        )
    )
    assert missing.code == 38


def test_accounts_paginate_by_key_and_offset(chain: InProcessChain) -> None:
    path = "/cosmos.auth.v1beta1.Query/Accounts"
    everything = chain.query(path, auth_q.QueryAccountsRequest(), auth_q.QueryAccountsResponse)
    total = len(everything.accounts)
    assert total == len(KEYS) + 1  # and the fee collector
    seen, key = [], b""
    while True:
        page = chain.query(
            path,
            auth_q.QueryAccountsRequest(pagination=pagination_pb2.PageRequest(key=key, limit=3, count_total=True)),
            auth_q.QueryAccountsResponse,
        )
        assert page.pagination.total == (0 if key else total)  # counted on the first page only
        seen += list(page.accounts)
        key = page.pagination.next_key
        if not key:
            break
    assert seen == list(everything.accounts)
    offset = chain.query(
        path,
        auth_q.QueryAccountsRequest(pagination=pagination_pb2.PageRequest(offset=5, limit=2)),
        auth_q.QueryAccountsResponse,
    )
    assert list(offset.accounts) == list(everything.accounts)[5:7]
    bad = chain.app.query(
        abci.RequestQuery(
            path=path,
            data=auth_q.QueryAccountsRequest(
                pagination=pagination_pb2.PageRequest(key=b"x", offset=1)
            ).SerializeToString(),
        )
    )
    assert bad.code == 18 and "either a key or an offset" in bad.log


def test_all_balances_pages(chain: InProcessChain) -> None:
    request = bank_q.QueryAllBalancesRequest(
        address=address_of(KEYS[3]), pagination=pagination_pb2.PageRequest(limit=1)
    )
    first = chain.query("/cosmos.bank.v1beta1.Query/AllBalances", request, bank_q.QueryAllBalancesResponse)
    assert [(c.denom, c.amount) for c in first.balances] == [("ngonka", "1003")]
    request.pagination.key = first.pagination.next_key
    second = chain.query("/cosmos.bank.v1beta1.Query/AllBalances", request, bank_q.QueryAllBalancesResponse)
    assert [(c.denom, c.amount) for c in second.balances] == [("utoken3", "5")] and not second.pagination.next_key
