"""Queries off the event loop and the simulation gas limit, in process over real sockets.

A test-only query route blocks its worker thread on a ``threading.Event``: while it is blocked the
loop must go on answering consensus (ABCI Info, FinalizeBlock, Commit), and once released the query
must answer from the committed state it started on. Nothing waits on a clock: every step waits for
an event, and timeouts only turn a hang into a failure.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Unpack

import grpc
import pydantic
import pytest
from chain import AppOptions, InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2_grpc as bank_grpc
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2_grpc as tx_grpc
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message
from test_abci_server import FLUSH, Client

from app import GonkaApp
from gonkad.config import AppConfig, config_dir, load_app_config, save_app_config
from sdk.abci import ABCIServer
from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import Coins, parse_coins
from sdk.context import Context
from sdk.crypto import bech32, secp256k1
from sdk.errors import ErrOutOfGas
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT
from sdk.grpc import GRPCServer
from sdk.module import QueryRoute
from sdk.workers import query_workers

CHAIN = "gonka-workers"
DENOM = "ngonka"
ALICE = secp256k1.PrivateKey(b"\x01" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x02" * 32))
FUNDS = 1_000_000
BLOCKING = "/gonka.test.Blocking/Balances"
WAIT_S = 10.0
SMALL_LIMIT = 100_000  # a one-message send simulates at ~35k gas, a ten-message one at ~224k


class Gate:
    """A query route that reads Alice's balance, waits to be released, then reads Bob's."""

    def __init__(self, app: GonkaApp) -> None:
        self.app = app
        self.entered = threading.Event()
        self.release = threading.Event()

    def handler(self, ctx: Context, request: bank_query.QueryAllBalancesRequest) -> bank_query.QueryAllBalancesResponse:
        bank = self.app.bank_keeper
        alice = bank.get_balance(ctx, bech32.decode(address_of(ALICE)), DENOM)
        self.entered.set()
        if not self.release.wait(WAIT_S):
            raise TimeoutError("the test never released the query")
        bob = bank.get_balance(ctx, bech32.decode(BOB), DENOM)
        return bank_query.QueryAllBalancesResponse(
            balances=[{"denom": "alice", "amount": str(alice)}, {"denom": "bob", "amount": str(bob)}]
        )


def start(path: Path, **options: Unpack[AppOptions]) -> InProcessChain:
    """Alice funded at genesis, block 1 committed."""
    return InProcessChain(path, {address_of(ALICE): [(DENOM, FUNDS)]}, chain_id=CHAIN, **options)


def sends(count: int, sequence: int = 0, amount: int = 7) -> bytes:
    """One tx of ``count`` MsgSends from Alice, to Bob (one) or to distinct fresh addresses."""
    recipients = [BOB] if count == 1 else [bech32.encode((i + 1).to_bytes(20, "big")) for i in range(count)]
    coins = Coins(((DENOM, amount),))
    return sign_tx(ALICE, [send_msg(address_of(ALICE), r, coins) for r in recipients], CHAIN, 0, sequence)


def query_request(path: str, request: Message | bytes) -> abci.Request:
    data = request if isinstance(request, bytes) else request.SerializeToString()
    return abci.Request(query=abci.RequestQuery(path=path, data=data))


def balances(reply: abci.ResponseQuery | bank_query.QueryAllBalancesResponse) -> dict[str, int]:
    if isinstance(reply, abci.ResponseQuery):
        assert reply.code == 0, reply.log
        reply = bank_query.QueryAllBalancesResponse.FromString(reply.value)
    return {coin.denom: int(coin.amount) for coin in reply.balances}


@asynccontextmanager
async def node(app: GonkaApp) -> AsyncIterator[tuple[ABCIServer, GRPCServer]]:
    """The node's two servers on this loop, sharing one query worker, as ``gonkad start`` runs them."""
    workers = query_workers(1)
    abci_server = ABCIServer(app, "127.0.0.1", 0, workers=workers)
    grpc_server = GRPCServer(app, "127.0.0.1:0", "tcp://127.0.0.1:1", workers)  # no CometBFT: none needed
    await abci_server.start()
    await grpc_server.start()
    try:
        yield abci_server, grpc_server
    finally:
        await grpc_server.stop()
        await abci_server.stop()
        workers.shutdown(wait=True)


def with_gate(tmp_path: Path, test: Callable[[GonkaApp, Gate, ABCIServer, GRPCServer], Awaitable[None]]) -> None:
    chain = start(tmp_path / "db")
    gate = Gate(chain.app)
    chain.app.query_routes[BLOCKING] = QueryRoute(bank_query.QueryAllBalancesRequest, gate.handler)

    async def main() -> None:
        async with node(chain.app) as (abci_server, grpc_server):
            try:
                await test(chain.app, gate, abci_server, grpc_server)
            finally:
                gate.release.set()  # never leave the worker blocked, whatever failed

    asyncio.run(main())
    chain.close()


async def entered(gate: Gate) -> None:
    assert await asyncio.to_thread(gate.entered.wait, WAIT_S), "the query never started"


async def commit_block(consensus: Client, height: int, txs: list[bytes]) -> abci.ResponseFinalizeBlock:
    finalize = abci.Request(finalize_block=abci.RequestFinalizeBlock(height=height, txs=txs))
    replies = await consensus.call(finalize, abci.Request(commit=abci.RequestCommit()), FLUSH)
    assert [r.WhichOneof("value") for r in replies] == ["finalize_block", "commit", "flush"]
    return replies[0].finalize_block


def test_consensus_answers_while_an_abci_query_is_blocked(tmp_path: Path) -> None:
    async def test(app: GonkaApp, gate: Gate, abci_server: ABCIServer, grpc_server: GRPCServer) -> None:
        query, consensus = await Client.connect(abci_server.port), await Client.connect(abci_server.port)
        await query.send(query_request(BLOCKING, bank_query.QueryAllBalancesRequest()), FLUSH)
        await entered(gate)
        # The query's worker is blocked: the loop must still answer the consensus connection.
        info = (await consensus.call(abci.Request(info=abci.RequestInfo()), FLUSH))[0].info
        assert info.last_block_height == 1
        result = await commit_block(consensus, 2, [sends(1)])
        assert result.tx_results[0].code == 0, result.tx_results[0].log
        assert not gate.release.is_set()
        gate.release.set()
        reply, _ = await query.recv(2)
        assert reply.query.height == 1
        assert balances(reply.query) == {"alice": FUNDS, "bob": 0}
        for client in (query, consensus):
            await client.close()

    with_gate(tmp_path, test)


def test_query_started_before_a_commit_reads_the_pre_commit_state(tmp_path: Path) -> None:
    """Alice's balance is read before the Commit lands, Bob's after: both must be the old block's."""

    async def test(app: GonkaApp, gate: Gate, abci_server: ABCIServer, grpc_server: GRPCServer) -> None:
        query, consensus = await Client.connect(abci_server.port), await Client.connect(abci_server.port)
        await query.send(query_request(BLOCKING, bank_query.QueryAllBalancesRequest()), FLUSH)
        await entered(gate)
        await commit_block(consensus, 2, [sends(1, amount=7)])
        gate.release.set()
        before = (await query.recv(2))[0].query
        assert (before.height, balances(before)) == (1, {"alice": FUNDS, "bob": 0})
        # A query begun after the Commit sees the new block whole.
        gate.entered.clear()
        after = (await query.call(query_request(BLOCKING, bank_query.QueryAllBalancesRequest()), FLUSH))[0].query
        assert (after.height, balances(after)) == (2, {"alice": FUNDS - 7, "bob": 7})
        for client in (query, consensus):
            await client.close()

    with_gate(tmp_path, test)


def test_consensus_answers_while_a_grpc_query_is_blocked(tmp_path: Path) -> None:
    async def test(app: GonkaApp, gate: Gate, abci_server: ABCIServer, grpc_server: GRPCServer) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_server.port}") as channel:
            call = channel.unary_unary(
                BLOCKING,
                request_serializer=bank_query.QueryAllBalancesRequest.SerializeToString,
                response_deserializer=bank_query.QueryAllBalancesResponse.FromString,
            )
            pending = asyncio.ensure_future(call(bank_query.QueryAllBalancesRequest(), timeout=WAIT_S))
            await entered(gate)
            consensus = await Client.connect(abci_server.port)
            assert (await consensus.call(abci.Request(info=abci.RequestInfo()), FLUSH))[0].info.last_block_height == 1
            await commit_block(consensus, 2, [sends(1)])
            assert not pending.done()
            # A bounded query (a point read) is answered on the loop, not queued behind the busy worker.
            bob = await bank_grpc.QueryStub(channel).Balance(
                bank_query.QueryBalanceRequest(address=BOB, denom=DENOM), timeout=WAIT_S
            )
            assert int(bob.balance.amount) == 7 and not pending.done()
            gate.release.set()
            assert balances(await pending) == {"alice": FUNDS, "bob": 0}
            await consensus.close()

    with_gate(tmp_path, test)


def simulated_gas(reply: abci.ResponseQuery) -> int:
    assert reply.code == 0, reply.log
    return tx_service.SimulateResponse.FromString(reply.value).gas_info.gas_used


def assert_out_of_gas(reply: abci.ResponseQuery, limit: int) -> None:
    assert (reply.codespace, reply.code) == (ErrOutOfGas.codespace, ErrOutOfGas.code)
    limit_log = f"simulation needs more than this node's limit of {limit} gas (app.toml simulation_gas_limit)"
    assert reply.log == limit_log + ": out of gas"


def test_simulation_over_the_gas_limit_fails_out_of_gas_over_abci_and_grpc(tmp_path: Path) -> None:
    chain = start(tmp_path / "db", simulation_gas_limit=SMALL_LIMIT)
    simulate = tx_service.SimulateRequest

    async def main() -> None:
        async with node(chain.app) as (abci_server, grpc_server):
            client = await Client.connect(abci_server.port)
            over, normal = query_request("/app/simulate", sends(10)), query_request("/app/simulate", sends(1))
            replies = await client.call(over, normal, FLUSH)
            assert_out_of_gas(replies[0].query, SMALL_LIMIT)
            assert 0 < simulated_gas(replies[1].query) < SMALL_LIMIT  # the node goes on answering

            async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_server.port}") as channel:
                service = tx_grpc.ServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await service.Simulate(simulate(tx_bytes=sends(10)), timeout=WAIT_S)
                assert failed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                details = failed.value.details() or ""
                assert details.startswith(f"simulation needs more than this node's limit of {SMALL_LIMIT} gas")
                assert "out of gas" in details and "\n" not in details
                ok = await service.Simulate(simulate(tx_bytes=sends(1)), timeout=WAIT_S)
                assert 0 < ok.gas_info.gas_used < SMALL_LIMIT
                bank = bank_grpc.QueryStub(channel)
                alice = await bank.Balance(bank_query.QueryBalanceRequest(address=address_of(ALICE), denom=DENOM))
                assert int(alice.balance.amount) == FUNDS
            await client.close()

    asyncio.run(main())
    chain.close()


def test_default_limit_refuses_a_3000_message_tx_and_allows_a_100_output_multisend(tmp_path: Path) -> None:
    chain = start(tmp_path / "db")

    def simulate(raw: bytes) -> abci.ResponseQuery:
        return chain.app.query(abci.RequestQuery(path="/app/simulate", data=raw))

    assert_out_of_gas(simulate(sends(3000)), DEFAULT_SIMULATION_GAS_LIMIT)  # ~63M gas
    one = parse_coins(f"1{DENOM}").to_proto()
    outputs = [bank_pb2.Output(address=bech32.encode((i + 1).to_bytes(20, "big")), coins=one) for i in range(100)]
    multisend = bank_tx.MsgMultiSend(
        inputs=[bank_pb2.Input(address=address_of(ALICE), coins=parse_coins(f"100{DENOM}").to_proto())], outputs=outputs
    )
    raw = sign_tx(ALICE, [multisend], CHAIN, 0, 0, gas_limit=5_000_000)
    assert 1_000_000 < simulated_gas(simulate(raw)) < DEFAULT_SIMULATION_GAS_LIMIT
    chain.close()


def test_app_toml_sets_the_limit_and_the_workers(tmp_path: Path) -> None:
    assert (AppConfig().simulation_gas_limit, AppConfig().query_workers) == (DEFAULT_SIMULATION_GAS_LIMIT, 1)
    config_dir(tmp_path).mkdir()
    chosen = AppConfig(simulation_gas_limit=SMALL_LIMIT, query_workers=2)
    save_app_config(tmp_path, chosen)
    assert load_app_config(tmp_path) == chosen
    for bad in ({"simulation_gas_limit": 0}, {"query_workers": 0}):
        with pytest.raises(pydantic.ValidationError):
            AppConfig.model_validate(bad)
