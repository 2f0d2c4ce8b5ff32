"""CosmJS (``@cosmjs/stargate`` from npm, unchanged: clients/js) against a real 2-validator localnet over
CometBFT RPC: what it reads and does must be what the chain itself says, read here over gRPC.

One run of clients/js/cosmjs_check.mjs reads balances, accounts, a block, the validators, the proposals and
the community pool, sends twice with ``"auto"`` gas (a simulate through ``abci_query``) and finds the tx by hash
and by indexed events; the test compares each figure with the chain's own.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from cosmpy.protos.cosmos.staking.v1beta1 import query_pb2 as staking_query
from nodes import running_localnet

from gonkad import localnet
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC
from sdk.client.tx import TxOptions, deliver
from sdk.client.txbuilder import address_of, pack
from sdk.crypto import bech32, secp256k1
from sdk.params import GOV_AUTHORITY

CHAIN = "gonka-cosmjs"
DENOM = "ngonka"
SETTINGS = localnet.load_settings(validators=2, chain_id=CHAIN)
SCRIPT = Path(__file__).resolve().parents[1] / "clients" / "js" / "cosmjs_check.mjs"
AMOUNT = 1234
POOL_FUNDING = 5 * 10**9
GAS_PRICE = 1  # ngonka per gas: what CosmJS pays for the gas it asks after simulating


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from running_localnet(tmp_path_factory.mktemp("cosmjs"), SETTINGS)


def querier(root: Path) -> Querier:
    node = localnet.load(root).nodes[0]
    return Querier(node.rpc, grpc_addr=f"127.0.0.1:{node.grpc_port}")


def balance(q: Querier, address: str, height: int = 0) -> int:
    request = bank_query.QueryBalanceRequest(address=address, denom=DENOM)
    return int(
        q.query("/cosmos.bank.v1beta1.Query/Balance", request, bank_query.QueryBalanceResponse, height).balance.amount
    )


def account(q: Querier, address: str) -> auth_pb2.BaseAccount:
    reply = q.query(
        "/cosmos.auth.v1beta1.Query/Account",
        auth_query.QueryAccountRequest(address=address),
        auth_query.QueryAccountResponse,
    )
    found = auth_pb2.BaseAccount()
    assert reply.account.Unpack(found)
    return found


def community_pool(q: Querier, height: int) -> list[tuple[str, str]]:
    reply = q.query(
        "/cosmos.distribution.v1beta1.Query/CommunityPool",
        distribution_query.QueryCommunityPoolRequest(),
        distribution_query.QueryCommunityPoolResponse,
        height,
    )
    return [(c.denom, c.amount) for c in reply.pool]


def submit_proposal(root: Path) -> int:
    """One open proposal (a payment by the authority, from val0 with the minimum deposit), for CosmJS to list."""
    q = querier(root)
    params = q.query("/cosmos.gov.v1.Query/Params", gov_query.QueryParamsRequest(), gov_query.QueryParamsResponse)
    payment = bank_tx.MsgSend(
        from_address=bech32.encode(GOV_AUTHORITY),
        to_address=bech32.encode(bytes(20)),
        amount=[coin_pb2.Coin(denom=DENOM, amount="1")],
    )
    key = localnet.load_key(root, "val0")
    msg = gov_tx.MsgSubmitProposal(
        messages=[pack(payment)],
        initial_deposit=list(params.params.min_deposit),
        proposer=address_of(key),
        title="cosmjs",
        summary="a proposal CosmJS lists",
    )
    delivered = deliver(q, key, [msg], CHAIN, TxOptions(gas="2000000"))
    return int(delivered.attribute("submit_proposal", "proposal_id"))


def fund_pool(root: Path) -> None:
    """POOL_FUNDING into the community pool from val1, so that CosmJS reads a pool that holds something."""
    key = localnet.load_key(root, "val1")
    msg = distribution_tx.MsgFundCommunityPool(
        amount=[coin_pb2.Coin(denom=DENOM, amount=str(POOL_FUNDING))], depositor=address_of(key)
    )
    deliver(querier(root), key, [msg], CHAIN, TxOptions(gas="400000"))


def run_cosmjs(root: Path, key: secp256k1.PrivateKey, recipient: str, proposal: int) -> dict[str, Any]:
    node = localnet.load(root).nodes[0]
    args = {
        "rpc": "http://" + node.rpc.removeprefix("tcp://"),
        "key": key.secret.hex(),
        "recipient": recipient,
        "amount": str(AMOUNT),
        "denom": DENOM,
        "prefix": bech32.ACCOUNT_PREFIX,
        "gasPrice": f"{GAS_PRICE}{DENOM}",
        "proposal": str(proposal),
    }
    done = subprocess.run(
        ["node", str(SCRIPT), json.dumps(args)], capture_output=True, text=True, timeout=120, cwd=SCRIPT.parent
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def run(net: Path) -> dict[str, Any]:
    """What CosmJS saw, and the chain's own figures read just before and after it."""
    q = querier(net)
    proposal = submit_proposal(net)
    fund_pool(net)
    key = localnet.load_key(net, "faucet")
    sender = address_of(key)
    recipient = address_of(secp256k1.PrivateKey(os.urandom(32)))
    chain: dict[str, Any] = {
        "start": CometRPC(localnet.load(net).nodes[0].rpc).height(),
        "balance": balance(q, sender),
        "all_balances": q.query(
            "/cosmos.bank.v1beta1.Query/AllBalances",
            bank_query.QueryAllBalancesRequest(address=sender),
            bank_query.QueryAllBalancesResponse,
        ).balances,
        "account": account(q, sender),
        "validators": q.query(
            "/cosmos.staking.v1beta1.Query/Validators",
            staking_query.QueryValidatorsRequest(status="BOND_STATUS_BONDED"),
            staking_query.QueryValidatorsResponse,
        ).validators,
        "proposals": q.query(
            "/cosmos.gov.v1.Query/Proposals", gov_query.QueryProposalsRequest(), gov_query.QueryProposalsResponse
        ).proposals,
    }
    seen = run_cosmjs(net, key, recipient, proposal)
    chain["end"] = CometRPC(localnet.load(net).nodes[0].rpc).height()
    chain["after"] = balance(q, sender)
    chain["recipient"] = balance(q, recipient)
    chain["recipient_account"] = account(q, recipient)
    return {"seen": seen, "chain": chain, "sender": sender, "recipient": recipient, "proposal": proposal, "net": net}


def coins(items: Any) -> list[tuple[str, str]]:
    return [(c["denom"], c["amount"]) for c in items]


def test_reads_balances_accounts_and_a_block(run: dict[str, Any]) -> None:
    seen, chain = run["seen"], run["chain"]
    assert (seen["sender"], seen["chainId"]) == (run["sender"], CHAIN)
    before = seen["before"]
    assert before["balance"] == {"denom": DENOM, "amount": str(chain["balance"])}
    assert coins(before["allBalances"]) == [(c.denom, c.amount) for c in chain["all_balances"]]
    assert before["recipient"] == {"denom": DENOM, "amount": "0"}
    account = chain["account"]
    assert before["account"]["address"] == run["sender"]
    assert (int(before["account"]["accountNumber"]), before["account"]["sequence"]) == (
        account.account_number,
        account.sequence,
    )
    assert before["sequence"] == {"accountNumber": str(account.account_number), "sequence": account.sequence}
    assert before["missingAccount"] is None  # "rpc error: code = NotFound", which CosmJS reads as no account
    rpc = CometRPC(localnet.load(run["net"]).nodes[0].rpc)
    assert chain["start"] <= seen["height"] <= chain["end"]
    block = rpc.block(seen["height"])
    assert seen["block"] == {
        "height": seen["height"],
        "chainId": CHAIN,
        "txs": len(block["block"]["data"]["txs"] or []),
        "id": block["block_id"]["hash"],
    }


def test_reads_validators_proposals_and_the_community_pool(run: dict[str, Any]) -> None:
    seen, chain = run["seen"], run["chain"]
    assert len(chain["validators"]) == SETTINGS.validators
    assert [(v["operatorAddress"], v["tokens"], v["status"], v["jailed"]) for v in seen["validators"]] == [
        (v.operator_address, v.tokens, v.status, v.jailed) for v in chain["validators"]
    ]
    assert {int(v["tokens"]) for v in seen["validators"]} == {SETTINGS.validator_stake_ngonka}
    assert seen["validator"] == seen["validators"][0]["operatorAddress"]
    assert [(int(p["id"]), p["status"]) for p in seen["proposals"]] == [(p.id, p.status) for p in chain["proposals"]]
    assert run["proposal"] in [int(p["id"]) for p in seen["proposals"]]
    mine = next(p for p in chain["proposals"] if p.id == run["proposal"])
    assert seen["proposal"]["totalDeposit"] == [{"denom": c.denom, "amount": c.amount} for c in mine.total_deposit]
    q = querier(run["net"])
    pools = [community_pool(q, h) for h in range(chain["start"], chain["end"] + 1)]
    assert coins(seen["communityPool"]) in pools  # the pool at the height CosmJS read it
    # funded by the fixture (more once an epoch's rewards pay in), as a LegacyDec on the wire: value × 10^18
    assert int(seen["communityPool"][0]["amount"]) >= POOL_FUNDING * 10**18


def test_sends_with_auto_gas_exactly(run: dict[str, Any]) -> None:
    """Two sends, to a new account then to it again (the smallest tx, the thinnest margin): each fits in the
    gas CosmJS asked (the simulation, fee transfer included, times 1.4) and costs exactly amount plus fee."""
    seen, chain = run["seen"], run["chain"]
    fees = []
    for send, fee in ((seen["send"], seen["byHash"]["fee"]), (seen["again"], seen["again"]["fee"])):
        assert send["code"] == 0
        assert 0 < int(send["gasUsed"]) < int(send["gasWanted"])  # the simulated gas times CosmJS's 1.4
        assert fee["gasLimit"] == send["gasWanted"]
        assert coins(fee["amount"]) == [(DENOM, str(math.ceil(int(send["gasWanted"]) * GAS_PRICE)))]
        fees.append(int(fee["amount"][0]["amount"]))
    assert chain["after"] == chain["balance"] - 2 * AMOUNT - sum(fees)
    assert seen["after"]["balance"] == {"denom": DENOM, "amount": str(chain["after"])}
    assert seen["after"]["recipient"] == {"denom": DENOM, "amount": str(2 * AMOUNT)}
    assert chain["recipient"] == 2 * AMOUNT
    assert seen["after"]["account"]["sequence"] == chain["account"].sequence + 2
    assert seen["after"]["sequence"]["sequence"] == chain["account"].sequence + 2
    made = seen["after"]["recipientAccount"]
    assert (made["address"], int(made["accountNumber"]), made["sequence"]) == (
        run["recipient"],
        chain["recipient_account"].account_number,
        0,
    )


def test_finds_the_tx_by_hash_and_by_event(run: dict[str, Any]) -> None:
    seen = run["seen"]
    send = seen["send"]
    committed = CometRPC(localnet.load(run["net"]).nodes[0].rpc).tx(bytes.fromhex(send["hash"]))
    height, gas_used = int(committed["height"]), committed["tx_result"]["gas_used"]
    assert (send["height"], send["gasUsed"]) == (height, gas_used)
    found = seen["byHash"]
    assert (found["hash"], found["height"], found["code"], found["gasUsed"]) == (send["hash"], height, 0, gas_used)
    assert found["memo"] == "sent by CosmJS"
    assert seen["byEvent"] == [{"hash": send["hash"], "height": height, "code": 0}]  # transfer.recipient
    assert {"hash": send["hash"], "height": height} in seen["bySender"]  # message.sender and tx.height


def test_cosmjs_is_pinned() -> None:
    """The versions the lock file pins are the ones that ran (``make install``: ``npm ci``)."""
    lock = json.loads((SCRIPT.parent / "package-lock.json").read_text())
    packages = lock["packages"]
    pinned = {name: packages[f"node_modules/{name}"]["version"] for name in packages[""]["dependencies"]}
    for name, version in pinned.items():
        installed = json.loads((SCRIPT.parent / "node_modules" / name / "package.json").read_text())["version"]
        assert installed == version == packages[""]["dependencies"][name]
    assert not any("resolved" in entry for entry in packages.values())  # no registry named in the lock
