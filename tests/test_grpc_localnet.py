"""The gRPC server: module queries, tx and tendermint services, reflection, on a real 1-validator chain.

One in-process test drives the app by hand to show that queries never see a block before its Commit.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2_grpc as auth_grpc
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2_grpc as bank_grpc
from cosmpy.protos.cosmos.base.node.v1beta1 import query_pb2 as node_query
from cosmpy.protos.cosmos.base.node.v1beta1 import query_pb2_grpc as node_grpc
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tm_query
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2_grpc as tm_grpc
from cosmpy.protos.cosmos.consensus.v1 import query_pb2 as consensus_query
from cosmpy.protos.cosmos.consensus.v1 import query_pb2_grpc as consensus_grpc
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2_grpc as tx_grpc
from google.protobuf.message import Message

from gonkad import localnet
from sdk.abci.blocks import decode_injected_entry, is_injected_entry
from sdk.client.rpc import CometRPC
from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import Coins, parse_coins, parse_dec_coins, required_fees
from sdk.crypto import bech32, secp256k1
from sdk.grpc import GRPCServer
from x.auth.keys import module_address
from x.stake.params import default_params

CHAIN = "gonka-grpc"
DENOM = "ngonka"
SETTINGS = localnet.load_settings(validators=1, chain_id=CHAIN)
FAUCET_AMOUNT = SETTINGS.faucet_ngonka
VALIDATOR_AMOUNT = SETTINGS.validator_balance_ngonka - SETTINGS.validator_stake_ngonka  # the rest is bonded


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


def wait_for_tx(service: tx_grpc.ServiceStub, txhash: str, timeout_s: float = 20) -> tx_service.GetTxResponse:
    """Poll GetTx until the transaction is in a block, as a wallet waits after a sync broadcast."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return service.GetTx(tx_service.GetTxRequest(hash=txhash))
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND, err.details()
            assert time.monotonic() < deadline, "the transaction was not included"
            time.sleep(0.3)


def abci_query(root: Path, path: str, request: Message) -> tuple[str, int, bytes]:
    """The same query through CometBFT's ABCI query (what a light client or an RPC-only tool sends):
    codespace, code and value (CometBFT's JSON leaves out a zero code and an empty codespace)."""
    reply = CometRPC(localnet.status(root)["nodes"][0]["rpc"]).abci_query(path, request.SerializeToString())
    return reply.get("codespace", ""), int(reply.get("code", 0)), reply["value"]


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

    found = wait_for_tx(service, txhash)
    response = found.tx_response
    assert response.height >= 1 and response.code == 0 and response.txhash == txhash
    assert response.gas_used > 0 and response.timestamp
    assert "transfer" in [e.type for e in response.events]
    assert [log.msg_index for log in response.logs] == [0]
    assert found.tx.body.messages[0].type_url == "/cosmos.bank.v1beta1.MsgSend"

    assert balance(channel, recipient) == 1234
    assert balance(channel, sender) == before - 1234
    assert rpc_error(service.GetTx, tx_service.GetTxRequest(hash="00" * 32))[0] == grpc.StatusCode.NOT_FOUND


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
    chain = InProcessChain(tmp_path / "db", {address_of(alice): [(DENOM, 1_000)]}, chain_id=CHAIN)
    send = sign_tx(alice, [send_msg(address_of(alice), bob, parse_coins(f"7{DENOM}"))], CHAIN, 0, 0)

    async def scenario() -> list[int]:
        server = GRPCServer(chain.app, "127.0.0.1:0", "tcp://127.0.0.1:1")  # no CometBFT: queries need none
        await server.start()
        seen = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as ch:
                stub = bank_grpc.QueryStub(ch)
                request = bank_query.QueryBalanceRequest(address=bob, denom=DENOM)
                result = chain.finalize([send])
                assert result.tx_results[0].code == 0, result.tx_results[0].log
                seen.append(int((await stub.Balance(request)).balance.amount))
                chain.commit()
                seen.append(int((await stub.Balance(request)).balance.amount))
        finally:
            await server.stop()
        return seen

    assert asyncio.run(scenario()) == [0, 7]


GAS_ADJUSTMENT = 1.3
"""The margin wallets put on the simulated gas (cosmjs's fee "auto" uses 1.4, the SDK CLI --gas-adjustment)."""


def wallet_send(ch: grpc.Channel, key: secp256k1.PrivateKey, recipient: str, coins: Coins) -> tx_service.GetTxResponse:
    """A wallet's default send path, gRPC only, with nothing known but the node's address and the key:
    chain id, account number and sequence, block gas limit and minimum gas price all come from the node;
    simulate, sign with the adjusted gas and its fee, broadcast (sync), wait for the block."""
    sender = address_of(key)
    chain_id = tm_grpc.ServiceStub(ch).GetNodeInfo(tm_query.GetNodeInfoRequest()).default_node_info.network
    account = auth_pb2.BaseAccount()
    auth_grpc.QueryStub(ch).Account(auth_query.QueryAccountRequest(address=sender)).account.Unpack(account)
    max_gas = consensus_grpc.QueryStub(ch).Params(consensus_query.QueryParamsRequest()).params.block.max_gas
    prices = parse_dec_coins(node_grpc.ServiceStub(ch).Config(node_query.ConfigRequest()).minimum_gas_price)
    messages = [send_msg(sender, recipient, coins)]
    service = tx_grpc.ServiceStub(ch)

    draft = sign_tx(key, messages, chain_id, account.account_number, account.sequence)  # default gas and no fee
    used = service.Simulate(tx_service.SimulateRequest(tx_bytes=draft)).gas_info.gas_used
    gas = math.ceil(used * GAS_ADJUSTMENT)
    assert max_gas < 0 or gas <= max_gas, f"the block gas limit {max_gas} is below the {gas} gas a send needs"
    tx_bytes = sign_tx(
        key, messages, chain_id, account.account_number, account.sequence, fee=required_fees(prices, gas), gas_limit=gas
    )
    sync = tx_service.BroadcastTxRequest(tx_bytes=tx_bytes, mode=tx_service.BROADCAST_MODE_SYNC)
    sent = service.BroadcastTx(sync).tx_response
    assert sent.code == 0, sent.raw_log
    found = wait_for_tx(service, sent.txhash)
    assert found.tx_response.code == 0, found.tx_response.raw_log
    assert found.tx_response.gas_wanted == gas and found.tx_response.gas_used <= gas
    return found


def test_wallet_default_send_path(net1: Path, channel: grpc.Channel) -> None:
    key, recipient = localnet.load_key(net1, "faucet"), random_address()
    before = balance(channel, address_of(key))
    found = wallet_send(channel, key, recipient, parse_coins(f"4321{DENOM}"))
    assert found.tx.body.messages[0].type_url == "/cosmos.bank.v1beta1.MsgSend"
    assert balance(channel, recipient) == 4321
    assert balance(channel, address_of(key)) == before - 4321  # the localnet's minimum gas price is 0


def test_consensus_params_and_node_config(net1: Path, channel: grpc.Channel) -> None:
    """The consensus params are genesis.json's, kept in state at InitChain; over gRPC and ABCI alike."""
    written = json.loads((net1 / "node0" / "config" / "genesis.json").read_text())["consensus_params"]
    request = consensus_query.QueryParamsRequest()
    params = consensus_grpc.QueryStub(channel).Params(request).params
    assert params.block.max_bytes == int(written["block"]["max_bytes"])
    assert params.block.max_gas == int(written["block"]["max_gas"]) == -1  # CometBFT's default: no block gas limit
    assert params.evidence.max_age_num_blocks == int(written["evidence"]["max_age_num_blocks"])
    assert list(params.validator.pub_key_types) == written["validator"]["pub_key_types"] == ["ed25519"]
    _, code, value = abci_query(net1, "/cosmos.consensus.v1.Query/Params", request)
    assert code == 0 and consensus_query.QueryParamsResponse.FromString(value).params == params

    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    services = set(ProtoReflectionDescriptorDatabase(channel).get_services())
    assert {"cosmos.consensus.v1.Query", "cosmos.base.node.v1beta1.Service"} <= services
    config = node_grpc.ServiceStub(channel).Config(node_query.ConfigRequest())
    assert config.minimum_gas_price == ""  # app.toml's "0ngonka": the SDK leaves zero prices out
    _, code, value = abci_query(net1, "/cosmos.base.node.v1beta1.Service/Config", node_query.ConfigRequest())
    assert code == 0 and node_query.ConfigResponse.FromString(value) == config


def test_spendable_balances_and_module_accounts(net1: Path, channel: grpc.Channel) -> None:
    validator = key_address(net1, "val0")
    bank = bank_grpc.QueryStub(channel)
    request = bank_query.QuerySpendableBalancesRequest(
        address=validator, pagination=pagination_pb2.PageRequest(limit=1, count_total=True)
    )
    spendable = bank.SpendableBalances(request)
    assert [(c.denom, int(c.amount)) for c in spendable.balances] == [(DENOM, VALIDATOR_AMOUNT)]
    assert spendable.pagination.total == 1 and not spendable.pagination.next_key
    _, code, value = abci_query(net1, "/cosmos.bank.v1beta1.Query/SpendableBalances", request)
    assert code == 0 and bank_query.QuerySpendableBalancesResponse.FromString(value) == spendable
    by_denom = bank.SpendableBalanceByDenom(
        bank_query.QuerySpendableBalanceByDenomRequest(address=validator, denom=DENOM)
    )
    assert int(by_denom.balance.amount) == VALIDATOR_AMOUNT
    bad = bank_query.QuerySpendableBalancesRequest(address="gonka1nope")
    code, details = rpc_error(bank.SpendableBalances, bad)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "invalid address" in details
    assert abci_query(net1, "/cosmos.bank.v1beta1.Query/SpendableBalances", bad)[:2] == ("sdk", 7)  # invalid address

    auth = auth_grpc.QueryStub(channel)
    accounts = []
    for packed in auth.ModuleAccounts(auth_query.QueryModuleAccountsRequest()).accounts:
        account = auth_pb2.ModuleAccount()
        assert packed.Unpack(account)
        accounts.append(account)
    assert [(a.name, list(a.permissions)) for a in accounts] == [
        ("bonded_tokens_pool", ["staking"]),
        ("fee_collector", []),
    ]
    assert accounts[1].base_account.address == bech32.encode(module_address("fee_collector"))
    all_modules = auth_query.QueryModuleAccountsRequest()
    _, code, value = abci_query(net1, "/cosmos.auth.v1beta1.Query/ModuleAccounts", all_modules)
    assert code == 0 and len(auth_query.QueryModuleAccountsResponse.FromString(value).accounts) == 2
    fee_collector = auth_pb2.ModuleAccount()
    by_name = auth.ModuleAccountByName(auth_query.QueryModuleAccountByNameRequest(name="fee_collector"))
    assert by_name.account.Unpack(fee_collector) and fee_collector == accounts[1]
    code, details = rpc_error(auth.ModuleAccountByName, auth_query.QueryModuleAccountByNameRequest(name="nope"))
    assert code == grpc.StatusCode.NOT_FOUND and "nope" in details
    assert rpc_error(auth.ModuleAccountByName, auth_query.QueryModuleAccountByNameRequest())[0] == (
        grpc.StatusCode.INVALID_ARGUMENT
    )


def test_syncing_and_validator_sets(net1: Path, channel: grpc.Channel) -> None:
    service = tm_grpc.ServiceStub(channel)
    assert service.GetSyncing(tm_query.GetSyncingRequest()).syncing is False

    latest = service.GetLatestValidatorSet(tm_query.GetLatestValidatorSetRequest())
    assert latest.block_height >= 1 and latest.pagination.total == 1
    [validator] = latest.validators
    proposer = service.GetLatestBlock(tm_query.GetLatestBlockRequest()).sdk_block.header.proposer_address
    assert validator.address == proposer  # one validator proposes every block
    assert validator.pub_key.type_url == "/cosmos.crypto.ed25519.PubKey"
    assert validator.voting_power == SETTINGS.validator_stake_ngonka // default_params().power_reduction

    first = service.GetValidatorSetByHeight(tm_query.GetValidatorSetByHeightRequest(height=1))
    assert first.block_height == 1 and [(v.address, v.pub_key, v.voting_power) for v in first.validators] == [
        (validator.address, validator.pub_key, validator.voting_power)
    ]
    future = tm_query.GetValidatorSetByHeightRequest(height=10**9)
    code, details = rpc_error(service.GetValidatorSetByHeight, future)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not a committed block" in details
    past_the_end = tm_query.GetLatestValidatorSetRequest(pagination=pagination_pb2.PageRequest(offset=5, limit=1))
    code, details = rpc_error(service.GetLatestValidatorSet, past_the_end)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "page" in details


def test_get_txs_event(net1: Path, channel: grpc.Channel) -> None:
    """Search by indexed events (localnet/settings.toml index_events), in both the SDK's forms, paged."""
    key, recipient = localnet.load_key(net1, "faucet"), random_address()
    sent = [wallet_send(channel, key, recipient, parse_coins(f"{n}{DENOM}")).tx_response for n in (11, 22)]
    service = tx_grpc.ServiceStub(channel)
    by_recipient = f"transfer.recipient='{recipient}'"

    def hashes(**request: Any) -> tuple[list[str], int]:
        reply = service.GetTxsEvent(tx_service.GetTxsEventRequest(**request))
        assert len(reply.txs) == len(reply.tx_responses) and reply.pagination.total == reply.total
        return [r.txhash for r in reply.tx_responses], reply.total

    assert hashes(query=by_recipient) == ([s.txhash for s in sent], 2)
    assert hashes(query=by_recipient, order_by=tx_service.ORDER_BY_DESC) == ([sent[1].txhash, sent[0].txhash], 2)
    assert hashes(query=by_recipient, page=2, limit=1) == ([sent[1].txhash], 2)
    assert hashes(query=by_recipient, pagination=pagination_pb2.PageRequest(offset=1, limit=1)) == ([sent[1].txhash], 2)
    assert hashes(events=[f"transfer.recipient={recipient}"]) == ([s.txhash for s in sent], 2)  # pre-0.50 form
    assert hashes(events=[by_recipient, f"tx.height={sent[0].height}"]) == ([sent[0].txhash], 1)
    # the block's head is x/bls's certificate entry, which CometBFT indexes like a tx: it is not one
    block_txs = CometRPC(localnet.status(net1)["nodes"][0]["rpc"]).call("block", height=str(sent[0].height))
    entry = base64.b64decode(block_txs["block"]["data"]["txs"][0])
    assert is_injected_entry(entry) and decode_injected_entry(entry)[0] == "bls"
    assert hashes(query=f"tx.height={sent[0].height}") == ([sent[0].txhash], 1)
    code, details = rpc_error(service.GetTx, tx_service.GetTxRequest(hash=hashlib.sha256(entry).hexdigest()))
    assert code == grpc.StatusCode.NOT_FOUND and "proposal entry, not a tx" in details
    reply = service.GetTxsEvent(tx_service.GetTxsEventRequest(query=by_recipient, limit=1))
    assert reply.txs[0].body.messages[0].type_url == "/cosmos.bank.v1beta1.MsgSend"
    assert reply.tx_responses[0].timestamp == sent[0].timestamp and reply.tx_responses[0].height == sent[0].height

    for bad in (
        tx_service.GetTxsEventRequest(query="transfer.recipient="),  # no value
        tx_service.GetTxsEventRequest(query="transfer.recipient='x' OR tx.height=1"),
        tx_service.GetTxsEventRequest(),
        tx_service.GetTxsEventRequest(events=["transfer.recipient"]),
        tx_service.GetTxsEventRequest(query=by_recipient, page=3, limit=1),  # past the last page
    ):
        code, details = rpc_error(service.GetTxsEvent, bad)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, details
