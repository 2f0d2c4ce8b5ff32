"""The gRPC server: module queries, tx and tendermint services, reflection, on a real 1-validator chain.

One in-process test drives the app by hand to show that queries never see a block before its Commit.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, query_pb2 as auth_query, query_pb2_grpc as auth_grpc
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query, query_pb2_grpc as bank_grpc
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tm_query, query_pb2_grpc as tm_grpc
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service, service_pb2_grpc as tx_grpc
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message

from app import GonkaApp
from gonkad import genesis, localnet
from sdk.coins import parse_coins
from sdk.crypto import secp256k1
from sdk.server.grpc import GRPCServer
from sdk.store.commitstore import CommitStore
from sdk.client.txbuilder import address_of, send_msg, sign_tx

CHAIN = "gonka-grpc"
DENOM = "ngonka"
SETTINGS = localnet.load_settings(validators=1, chain_id=CHAIN)
FAUCET_AMOUNT = SETTINGS.faucet_ngonka
VALIDATOR_AMOUNT = SETTINGS.validator_balance_ngonka - SETTINGS.validator_stake_ngonka  # the rest is bonded
pytestmark = pytest.mark.localnet


@pytest.fixture(scope="module")
def net1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("grpcnet")
    try:
        localnet.start(root, validators=1, chain_id=CHAIN)
        localnet.wait_for_height(root, 2, timeout_s=60)
        yield root
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)


@pytest.fixture(scope="module")
def channel(net1: Path) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(localnet.status(net1)["nodes"][0]["grpc"]) as ch:
        yield ch


def key_address(root: Path, name: str) -> str:
    return address_of(localnet.load_key(root, name))


def random_address() -> str:
    return address_of(secp256k1.PrivateKey(os.urandom(32)))


def balance(ch: grpc.Channel, address: str) -> int:
    reply = bank_grpc.QueryStub(ch).Balance(bank_query.QueryBalanceRequest(address=address, denom=DENOM))
    return int(reply.balance.amount)


def rpc_error(call: Callable[[Message], Any], request: Message) -> tuple[grpc.StatusCode, str]:
    """The status a call fails with; it must fail."""
    with pytest.raises(grpc.RpcError) as info:
        call(request)
    failed = info.value
    assert isinstance(failed, grpc.Call)
    return failed.code(), failed.details() or ""


@pytest.mark.localnet
def test_module_queries_return_genesis_state(net1: Path, channel: grpc.Channel) -> None:
    faucet, validator = key_address(net1, "faucet"), key_address(net1, "val0")
    bank = bank_grpc.QueryStub(channel)
    assert balance(channel, faucet) == FAUCET_AMOUNT
    all_balances = bank.AllBalances(bank_query.QueryAllBalancesRequest(address=validator)).balances
    assert [(c.denom, int(c.amount)) for c in all_balances] == [(DENOM, VALIDATOR_AMOUNT)]
    supply = bank.TotalSupply(bank_query.QueryTotalSupplyRequest()).supply
    assert [(c.denom, int(c.amount)) for c in supply] == [(DENOM, SETTINGS.total_supply_ngonka)]

    auth = auth_grpc.QueryStub(channel)
    account = auth_pb2.BaseAccount()
    assert auth.Account(auth_query.QueryAccountRequest(address=faucet)).account.Unpack(account)
    assert account.address == faucet

    code, details = rpc_error(bank.Balance, bank_query.QueryBalanceRequest(address="gonka1nope", denom=DENOM))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "invalid address" in details
    code, details = rpc_error(auth.Account, auth_query.QueryAccountRequest(address=random_address()))
    assert code == grpc.StatusCode.NOT_FOUND and "not found" in details


@pytest.mark.localnet
def test_simulate_broadcast_and_get_tx(net1: Path, channel: grpc.Channel) -> None:
    key = localnet.load_key(net1, "faucet")
    sender, recipient = address_of(key), random_address()
    account = auth_pb2.BaseAccount()
    auth_grpc.QueryStub(channel).Account(auth_query.QueryAccountRequest(address=sender)).account.Unpack(account)
    before = balance(channel, sender)

    def send(sequence: int) -> bytes:
        msg = send_msg(sender, recipient, parse_coins(f"1234{DENOM}"))
        return sign_tx(key, [msg], CHAIN, account.account_number, sequence)

    tx_bytes = send(account.sequence)
    service = tx_grpc.ServiceStub(channel)
    simulated = service.Simulate(tx_service.SimulateRequest(tx_bytes=tx_bytes))
    assert simulated.gas_info.gas_wanted == 200_000 and simulated.gas_info.gas_used > 0
    assert "transfer" in [e.type for e in simulated.result.events]
    code, _ = rpc_error(service.Simulate, tx_service.SimulateRequest(tx_bytes=b"\xff\x00garbage"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    _, details = rpc_error(service.Simulate, tx_service.SimulateRequest(tx_bytes=send(account.sequence + 5)))
    assert "sequence" in details
    block_mode = tx_service.BroadcastTxRequest(tx_bytes=tx_bytes, mode=tx_service.BROADCAST_MODE_BLOCK)
    assert rpc_error(service.BroadcastTx, block_mode)[0] == grpc.StatusCode.INVALID_ARGUMENT

    sync = tx_service.BroadcastTxRequest(tx_bytes=tx_bytes, mode=tx_service.BROADCAST_MODE_SYNC)
    sent = service.BroadcastTx(sync).tx_response  # simulation wrote nothing: the same sequence is still valid
    txhash = hashlib.sha256(tx_bytes).hexdigest().upper()
    assert sent.code == 0, sent.raw_log
    assert sent.txhash == txhash

    deadline = time.monotonic() + 20
    while True:
        try:
            found = service.GetTx(tx_service.GetTxRequest(hash=txhash))
            break
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND, err.details()
            assert time.monotonic() < deadline, "the transaction was not included"
            time.sleep(0.3)
    response = found.tx_response
    assert response.height >= 1 and response.code == 0 and response.txhash == txhash
    assert response.gas_used > 0 and response.timestamp
    assert "transfer" in [e.type for e in response.events]
    assert [log.msg_index for log in response.logs] == [0]
    assert found.tx.body.messages[0].type_url == "/cosmos.bank.v1beta1.MsgSend"

    assert balance(channel, recipient) == 1234
    assert balance(channel, sender) == before - 1234
    assert rpc_error(service.GetTx, tx_service.GetTxRequest(hash="00" * 32))[0] == grpc.StatusCode.NOT_FOUND


@pytest.mark.localnet
def test_node_info_and_blocks(net1: Path, channel: grpc.Channel) -> None:
    service = tm_grpc.ServiceStub(channel)
    info = service.GetNodeInfo(tm_query.GetNodeInfoRequest())
    assert info.default_node_info.network == CHAIN
    assert info.default_node_info.default_node_id and info.default_node_info.moniker == "node0"
    assert (info.application_version.name, info.application_version.app_name) == ("gonka", "gonkad")

    latest = service.GetLatestBlock(tm_query.GetLatestBlockRequest())
    header = latest.sdk_block.header
    assert header.chain_id == CHAIN and header.height >= 1
    assert header.proposer_address.startswith("gonkavalcons1")
    assert len(header.app_hash) == 32 and len(latest.block_id.hash) == 32
    assert latest.block.header.height == header.height and len(latest.block.header.proposer_address) == 20
    assert header.time.seconds > 0

    first = service.GetBlockByHeight(tm_query.GetBlockByHeightRequest(height=1))
    assert first.sdk_block.header.height == 1
    assert first.sdk_block.header.chain_id == CHAIN
    future = tm_query.GetBlockByHeightRequest(height=10**9)
    assert rpc_error(service.GetBlockByHeight, future)[0] == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.localnet
def test_reflection_only_client_discovers_services_and_queries(net1: Path, channel: grpc.Channel) -> None:
    """A client with no compiled protos: everything comes from the server's reflection service."""
    from google.protobuf.descriptor_pool import DescriptorPool
    from google.protobuf.message_factory import GetMessageClass
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {
        "cosmos.bank.v1beta1.Query",
        "cosmos.auth.v1beta1.Query",
        "cosmos.tx.v1beta1.Service",
        "cosmos.base.tendermint.v1beta1.Service",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= services

    pool = DescriptorPool(database)
    method = pool.FindServiceByName("cosmos.bank.v1beta1.Query").methods_by_name["Balance"]
    request_type, response_type = GetMessageClass(method.input_type), GetMessageClass(method.output_type)
    call = channel.unary_unary(
        f"/{method.containing_service.full_name}/{method.name}",
        request_serializer=request_type.SerializeToString,
        response_deserializer=response_type.FromString,
    )
    reply: Any = call(request_type(address=key_address(net1, "val0"), denom=DENOM), timeout=10)
    assert (reply.balance.denom, int(reply.balance.amount)) == (DENOM, VALIDATOR_AMOUNT)


def test_queries_read_committed_state_only(tmp_path: Path) -> None:
    """Between FinalizeBlock and Commit a query still sees the previous block's state."""
    alice = secp256k1.PrivateKey(b"\x01" * 32)
    bob = address_of(secp256k1.PrivateKey(b"\x02" * 32))
    app = GonkaApp(CommitStore(str(tmp_path / "db")))
    state = genesis.add_genesis_account(genesis.default_app_state(), address_of(alice), [(DENOM, 1_000)])
    app.init_chain(abci.RequestInitChain(chain_id=CHAIN, initial_height=1, app_state_bytes=json.dumps(state).encode()))
    app.finalize_block(abci.RequestFinalizeBlock(height=1))
    app.commit(abci.RequestCommit())
    send = sign_tx(alice, [send_msg(address_of(alice), bob, parse_coins(f"7{DENOM}"))], CHAIN, 0, 0)

    async def scenario() -> list[int]:
        server = GRPCServer(app, "127.0.0.1:0", "tcp://127.0.0.1:1")  # no CometBFT: queries need none
        await server.start()
        seen = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as ch:
                stub = bank_grpc.QueryStub(ch)
                request = bank_query.QueryBalanceRequest(address=bob, denom=DENOM)
                result = app.finalize_block(abci.RequestFinalizeBlock(height=2, txs=[send]))
                assert result.tx_results[0].code == 0, result.tx_results[0].log
                seen.append(int((await stub.Balance(request)).balance.amount))
                app.commit(abci.RequestCommit())
                seen.append(int((await stub.Balance(request)).balance.amount))
        finally:
            await server.stop()
        return seen

    assert asyncio.run(scenario()) == [0, 7]
