"""The node's gRPC server over an in-process chain (no CometBFT: module queries need none): argument errors
are the client's (INVALID_ARGUMENT, never INTERNAL with a traceback in the log) and the
``x-cosmos-block-height`` header. The same services on a real localnet: tests/test_grpc_localnet.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2_grpc as bank_grpc
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from app import GonkaApp
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import secp256k1
from sdk.grpc import GRPCServer
from sdk.store.commitstore import CommitStore
from sdk.workers import query_workers

CHAIN = "gonka-grpc-app"
DENOM = "ngonka"
ALICE = secp256k1.PrivateKey(b"\x01" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x02" * 32))
BLOCK_WORK = "/gonka.inference.v1.Query/BlockWork"
BALANCE = "/cosmos.bank.v1beta1.Query/Balance"
HEIGHT = "x-cosmos-block-height"
T = TypeVar("T")


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    with InProcessChain(tmp_path / "db", {address_of(ALICE): [(DENOM, 1_000)]}, chain_id=CHAIN) as chain:
        yield chain


def over_grpc(chain: InProcessChain, calls: Callable[[grpc.aio.Channel], Awaitable[T]]) -> T:
    """``calls`` against a gRPC server on ``chain``'s app with one query worker thread, as a node runs them,
    started and stopped around them."""

    async def scenario() -> T:
        server = GRPCServer(chain.app, "127.0.0.1:0", "tcp://127.0.0.1:1", workers)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                return await calls(channel)
        finally:
            await server.stop()

    with query_workers(1) as workers:
        return asyncio.run(scenario())


def block_work_status(height: int) -> Callable[[grpc.aio.Channel], Awaitable[tuple[grpc.StatusCode, str]]]:
    """A BlockWork call for ``height``, which must fail: its status code and details."""

    async def call(channel: grpc.aio.Channel) -> tuple[grpc.StatusCode, str]:
        method = channel.unary_unary(
            BLOCK_WORK,
            request_serializer=inference_query.QueryBlockWorkRequest.SerializeToString,
            response_deserializer=inference_query.QueryBlockWorkResponse.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await method(inference_query.QueryBlockWorkRequest(height=height))
        return failed.value.code(), failed.value.details() or ""

    return call


@pytest.mark.parametrize("height", [-1, -(2**63)])
def test_block_work_below_height_1_is_invalid_argument(
    chain: InProcessChain, caplog: pytest.LogCaptureFixture, height: int
) -> None:
    """A negative height (or a huge one on the wire, which an int64 reads as negative) is the caller's error:
    INVALID_ARGUMENT over gRPC and ``sdk/18`` over ABCI (its log the gRPC status's text, as the Cosmos SDK's),
    with nothing logged as a server failure."""
    with caplog.at_level(logging.WARNING):
        code, details = over_grpc(chain, block_work_status(height))
        reply = chain.app.query(
            abci.RequestQuery(
                path=BLOCK_WORK, data=inference_query.QueryBlockWorkRequest(height=height).SerializeToString()
            )
        )
    log = f"height must be positive, got {height}: invalid request"
    assert (code, details) == (grpc.StatusCode.INVALID_ARGUMENT, log)
    assert (reply.codespace, reply.code, reply.log) == ("sdk", 18, f"rpc error: code = InvalidArgument desc = {log}")
    assert [r.getMessage() for r in caplog.records] == []


def test_block_work_of_a_block_without_work_is_not_found(chain: InProcessChain) -> None:
    code, details = over_grpc(chain, block_work_status(chain.height))
    assert code == grpc.StatusCode.NOT_FOUND and details.startswith(f"no work root at height {chain.height} ")


def answered_at(call: grpc.aio.UnaryUnaryCall) -> Awaitable[list[str]]:
    """The ``x-cosmos-block-height`` values of a call's initial metadata (exactly one is expected)."""

    async def heights() -> list[str]:
        return [value for key, value in await call.initial_metadata() if key == HEIGHT]

    return heights()


def bob_funded_twice(chain: InProcessChain) -> tuple[int, int, int]:
    """Heights at which BOB holds 0, then 7, then 12 (the latest)."""
    empty = chain.height
    for sequence, amount in enumerate((7, 5)):
        send = sign_tx(ALICE, [send_msg(address_of(ALICE), BOB, parse_coins(f"{amount}{DENOM}"))], CHAIN, 0, sequence)
        [result] = chain.block([send]).tx_results
        assert result.code == 0, result.log
    return empty, chain.height - 1, chain.height


def test_block_height_header_answers_from_that_heights_state(chain: InProcessChain) -> None:
    """As in the Cosmos SDK: a kept height's state answers, and the response's initial metadata says which
    height answered (the latest without the header); point lookups and listings alike."""
    empty, seven, latest = bob_funded_twice(chain)

    async def calls(channel: grpc.aio.Channel) -> list[tuple[int, int, str]]:
        stub = bank_grpc.QueryStub(channel)
        seen = []
        for height in (None, empty, seven, latest):
            metadata = () if height is None else ((HEIGHT, str(height)),)
            one = stub.Balance(bank_query.QueryBalanceRequest(address=BOB, denom=DENOM), metadata=metadata)
            every = stub.AllBalances(bank_query.QueryAllBalancesRequest(address=BOB), metadata=metadata)
            balances = [(c.denom, int(c.amount)) for c in (await every).balances]
            assert balances == ([(DENOM, int((await one).balance.amount))] if balances else [])
            [at] = await answered_at(one)
            assert await answered_at(every) == [at]
            seen.append((height or 0, int((await one).balance.amount), at))
        return seen

    assert over_grpc(chain, calls) == [
        (0, 12, str(latest)),
        (empty, 0, str(empty)),
        (seven, 7, str(seven)),
        (latest, 12, str(latest)),
    ]


@pytest.mark.parametrize(
    "header, details",
    [
        ("abc", "invalid x-cosmos-block-height header 'abc': not a base-10 int64: invalid request"),
        ("1.5", "invalid x-cosmos-block-height header '1.5': not a base-10 int64: invalid request"),
        ("1_0", "invalid x-cosmos-block-height header '1_0': not a base-10 int64: invalid request"),
        ("0x10", "invalid x-cosmos-block-height header '0x10': not a base-10 int64: invalid request"),
        (str(2**63), f"invalid x-cosmos-block-height header '{2**63}': not a base-10 int64: invalid request"),
        ("-1", "height -1 is negative: invalid request"),
        ("FUTURE", "height FUTURE is not committed yet; latest is LATEST: invalid request"),
    ],
    ids=["letters", "decimal", "underscore", "hex", "over-int64", "negative", "future"],
)
def test_block_height_header_that_names_no_kept_height_is_invalid_argument(
    chain: InProcessChain, caplog: pytest.LogCaptureFixture, header: str, details: str
) -> None:
    latest = chain.height
    header = header.replace("FUTURE", str(latest + 1))
    details = details.replace("FUTURE", str(latest + 1)).replace("LATEST", str(latest))

    async def calls(channel: grpc.aio.Channel) -> list[tuple[grpc.StatusCode, str]]:
        stub = bank_grpc.QueryStub(channel)
        failures = []
        metadata = ((HEIGHT, header),)
        for call in (
            stub.Balance(bank_query.QueryBalanceRequest(address=BOB, denom=DENOM), metadata=metadata),
            stub.AllBalances(bank_query.QueryAllBalancesRequest(address=BOB), metadata=metadata),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await call
            failures.append((failed.value.code(), failed.value.details() or ""))
        return failures

    with caplog.at_level(logging.WARNING):
        assert over_grpc(chain, calls) == [(grpc.StatusCode.INVALID_ARGUMENT, details)] * 2
    assert [r.getMessage() for r in caplog.records] == []


def test_abci_query_at_a_height_answers_from_that_heights_state(chain: InProcessChain) -> None:
    """ABCI Query's own height field reads the same way for module queries (CometBFT's abci_query --height)."""
    empty, seven, latest = bob_funded_twice(chain)
    request = bank_query.QueryBalanceRequest(address=BOB, denom=DENOM).SerializeToString()
    answers = []
    for height in (0, empty, seven, latest):
        reply = chain.app.query(abci.RequestQuery(path=BALANCE, data=request, height=height))
        assert reply.code == 0, reply.log
        answers.append((reply.height, int(bank_query.QueryBalanceResponse.FromString(reply.value).balance.amount)))
    assert answers == [(latest, 12), (empty, 0), (seven, 7), (latest, 12)]
    negative = chain.app.query(abci.RequestQuery(path=BALANCE, data=request, height=-1))
    assert (negative.codespace, negative.code, negative.log) == ("sdk", 18, "height -1 is negative: invalid request")


def test_block_height_header_of_a_pruned_height_is_not_found(chain: InProcessChain) -> None:
    """A node keeps ``pruning_keep_recent`` versions (app.toml): an older height's state is gone."""
    chain.close()
    chain.app = GonkaApp(CommitStore(str(chain.path), keep_recent=2), **chain.options)  # the node restarted, pruning
    empty, seven, latest = bob_funded_twice(chain)

    async def calls(channel: grpc.aio.Channel) -> tuple[tuple[grpc.StatusCode, str], int]:
        stub = bank_grpc.QueryStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.AllBalances(bank_query.QueryAllBalancesRequest(address=BOB), metadata=((HEIGHT, str(empty)),))
        kept = await stub.Balance(
            bank_query.QueryBalanceRequest(address=BOB, denom=DENOM), metadata=((HEIGHT, str(seven)),)
        )
        return (failed.value.code(), failed.value.details() or ""), int(kept.balance.amount)

    pruned = f"version {empty} not available: kept versions are {seven}..{latest}: key not found"
    assert over_grpc(chain, calls) == ((grpc.StatusCode.NOT_FOUND, pruned), 7)


def test_two_block_height_headers_are_invalid_argument(chain: InProcessChain) -> None:
    async def calls(channel: grpc.aio.Channel) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await bank_grpc.QueryStub(channel).Balance(
                bank_query.QueryBalanceRequest(address=BOB, denom=DENOM), metadata=((HEIGHT, "1"), (HEIGHT, "1"))
            )
        return failed.value.code(), failed.value.details() or ""

    details = "invalid x-cosmos-block-height header ['1', '1']: not a base-10 int64: invalid request"
    assert over_grpc(chain, calls) == (grpc.StatusCode.INVALID_ARGUMENT, details)
