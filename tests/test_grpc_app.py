"""The node's gRPC server over an in-process chain (no CometBFT: module queries need none): argument errors
are the client's (INVALID_ARGUMENT, never INTERNAL with a traceback in the log) and the
``x-cosmos-block-height`` header. The same services on a real localnet: tests/test_grpc.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from protogen.gonka.inference.v1 import query_pb2 as inference_query
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1
from sdk.server.grpc import GRPCServer
from chain import InProcessChain

CHAIN = "gonka-grpc-app"
DENOM = "ngonka"
ALICE = secp256k1.PrivateKey(b"\x01" * 32)
BLOCK_WORK = "/gonka.inference.v1.Query/BlockWork"
T = TypeVar("T")


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    with InProcessChain(tmp_path / "db", {address_of(ALICE): [(DENOM, 1_000)]}, chain_id=CHAIN) as chain:
        yield chain


def over_grpc(chain: InProcessChain, calls: Callable[[grpc.aio.Channel], Awaitable[T]]) -> T:
    """``calls`` against a gRPC server on ``chain``'s app, started and stopped around them."""

    async def scenario() -> T:
        server = GRPCServer(chain.app, "127.0.0.1:0", "tcp://127.0.0.1:1")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                return await calls(channel)
        finally:
            await server.stop()

    return asyncio.run(scenario())


def block_work_status(height: int) -> Callable[[grpc.aio.Channel], Awaitable[tuple[grpc.StatusCode, str]]]:
    """A BlockWork call for ``height``, which must fail: its status code and details."""

    async def call(channel: grpc.aio.Channel) -> tuple[grpc.StatusCode, str]:
        method = channel.unary_unary(BLOCK_WORK, request_serializer=inference_query.QueryBlockWorkRequest.SerializeToString,
                                     response_deserializer=inference_query.QueryBlockWorkResponse.FromString)
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await method(inference_query.QueryBlockWorkRequest(height=height))
        return failed.value.code(), failed.value.details() or ""

    return call


@pytest.mark.parametrize("height", [-1, -(2**63)])
def test_block_work_below_height_1_is_invalid_argument(
    chain: InProcessChain, caplog: pytest.LogCaptureFixture, height: int
) -> None:
    """A negative height (or a huge one on the wire, which an int64 reads as negative) is the caller's error:
    INVALID_ARGUMENT over gRPC and ``sdk/18`` over ABCI, with nothing logged as a server failure."""
    with caplog.at_level(logging.WARNING):
        code, details = over_grpc(chain, block_work_status(height))
        reply = chain.app.query(abci.RequestQuery(
            path=BLOCK_WORK, data=inference_query.QueryBlockWorkRequest(height=height).SerializeToString()))
    assert (code, details) == (grpc.StatusCode.INVALID_ARGUMENT, f"height must be positive, got {height}: invalid request")
    assert (reply.codespace, reply.code, reply.log) == ("sdk", 18, f"height must be positive, got {height}: invalid request")
    assert [r.getMessage() for r in caplog.records] == []


def test_block_work_of_a_block_without_work_is_not_found(chain: InProcessChain) -> None:
    code, details = over_grpc(chain, block_work_status(chain.height))
    assert code == grpc.StatusCode.NOT_FOUND and details.startswith(f"no work root at height {chain.height} ")
