"""Module queries through ABCI Query by their gRPC method paths, with pagination; failures and the tx service's
Simulate there as the Cosmos SDK answers them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_q
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_q
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
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


def test_a_failed_route_answers_with_the_grpc_status_text(chain: InProcessChain) -> None:
    """As the Cosmos SDK answers a gRPC route over ABCI: CosmJS's ``getAccount`` reads an unknown account as
    ``null`` only from ``rpc error: code = NotFound``; paths that are no route keep their plain log."""
    stranger = address_of(secp256k1.PrivateKey(b"\x55" * 32))
    missing = chain.app.query(
        abci.RequestQuery(
            path="/cosmos.auth.v1beta1.Query/Account",
            data=auth_q.QueryAccountRequest(address=stranger).SerializeToString(),
        )
    )
    assert (missing.codespace, missing.code) == ("sdk", 38)
    assert missing.log == f"rpc error: code = NotFound desc = account {stranger} not found: key not found"
    bad = chain.app.query(
        abci.RequestQuery(
            path="/cosmos.bank.v1beta1.Query/Balance",
            data=bank_q.QueryBalanceRequest(address="gonka1nope", denom="ngonka").SerializeToString(),
        )
    )
    assert (bad.code, bad.log.startswith("rpc error: code = InvalidArgument desc = ")) == (7, True), bad.log
    unknown = chain.app.query(abci.RequestQuery(path="/cosmos.nothing.v1.Query/Nothing"))
    assert (unknown.code, unknown.log) == (6, "unknown query path '/cosmos.nothing.v1.Query/Nothing': unknown request")


def test_simulate_is_a_route_too(chain: InProcessChain) -> None:
    """``cosmos.tx.v1beta1.Service/Simulate`` over ABCI (CosmJS's ``"auto"`` gas): the SDK's
    ``SimulateResponse``, the same gas as ``/app/simulate``; a failing tx is its own error, as over gRPC."""
    sender = address_of(KEYS[0])
    account = chain.account(sender)
    assert account is not None

    def send(amount: int) -> bytes:
        msg = send_msg(sender, address_of(KEYS[1]), parse_coins(f"{amount}ngonka"))
        return sign_tx(KEYS[0], [msg], "q", account.account_number, account.sequence)

    def simulate(raw: bytes) -> abci.ResponseQuery:
        request = tx_service.SimulateRequest(tx_bytes=raw).SerializeToString()
        return chain.app.query(abci.RequestQuery(path="/cosmos.tx.v1beta1.Service/Simulate", data=request))

    reply = simulate(send(10))
    assert reply.code == 0, reply.log
    simulated = tx_service.SimulateResponse.FromString(reply.value)
    legacy = tx_service.SimulateResponse.FromString(
        chain.app.query(abci.RequestQuery(path="/app/simulate", data=send(10))).value
    )
    assert simulated.gas_info == legacy.gas_info and simulated.gas_info.gas_used > 0
    assert "transfer" in [e.type for e in simulated.result.events]
    short = simulate(send(10**6))
    assert (short.codespace, short.code) == ("sdk", 5), short.log
    assert short.log.startswith("rpc error: code = FailedPrecondition desc = ") and "(gas wanted" in short.log
    empty = simulate(b"")
    assert (empty.code, empty.log) == (
        18,
        "rpc error: code = InvalidArgument desc = empty txBytes is not allowed: invalid request",
    )
