"""Reads of a running chain that the inference network's localnet tests share: balances, locked (vesting)
coins, supply, inferences as they start and finish, committed txs, ``gonkad`` as a subprocess, the funding of
their keys (``fund``) and the accounting of a whole run (``check_accounting``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import httpx
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query

from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from protogen.gonka.vesting.v1 import query_pb2 as vesting_query
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.tx import TxOptions, deliver
from sdk.client.txbuilder import address_of, send_msg
from sdk.coins import make_coins
from sdk.crypto import bech32, secp256k1
from sdk.services import gonka

DENOM = "ngonka"
QUERY = gonka("inference").query


def wait_height(rpc: CometRPC, height: int, timeout_s: float = 90.0) -> int:
    """The node's height once it is at least ``height``."""
    deadline = time.monotonic() + timeout_s
    current = None
    while True:
        try:
            current = rpc.height()
            if current >= height:
                return current
        except RPCError:
            pass
        assert time.monotonic() < deadline, f"height {height} not reached in {timeout_s}s (at {current})"
        time.sleep(0.2)


def block_events(rpc: CometRPC, height: int, event_type: str) -> list[dict[str, str]]:
    """The attributes of the ``event_type`` events of block ``height``'s own (FinalizeBlock's, outside its txs)."""
    events = rpc.call("block_results", height=str(height))["finalize_block_events"] or []
    return [{a["key"]: a["value"] for a in e["attributes"]} for e in events if e["type"] == event_type]


def event_runs(rpc: CometRPC, height: int) -> list[list[tuple[str, dict[str, str]]]]:
    """Block ``height``'s events as (type, attributes), one list per transaction in block order, then the block's
    own: each list in the order its code emitted them."""
    results = rpc.call("block_results", height=str(height))
    runs = [tx.get("events") or [] for tx in results.get("txs_results") or []]
    runs.append(results.get("finalize_block_events") or [])
    return [[(e["type"], {a["key"]: a["value"] for a in e["attributes"]}) for e in run] for run in runs]


def collateral_at(q: Querier, operator: str, height: int) -> int:
    reply = q.query(
        "/gonka.stake.v1.Query/Host",
        stake_query.QueryHostRequest(operator=operator),
        stake_query.QueryHostResponse,
        height,
    )
    return int(reply.host.collateral)


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


def fund(querier: Querier, faucet: secp256k1.PrivateKey, chain_id: str, addresses: list[str], amount: int) -> None:
    """``amount`` ngonka from ``faucet`` to each of ``addresses``, in one transaction: one block to wait for, where a
    send each (a CLI process and a block apiece) took seconds per key before a test could start."""
    sends = [send_msg(address_of(faucet), address, make_coins([(DENOM, amount)])) for address in addresses]
    deliver(querier, faucet, sends, chain_id, TxOptions(gas=str(150_000 * len(sends))))


def committed(rpc: CometRPC, txhash: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return rpc.tx(bytes.fromhex(txhash))
        except RPCError:
            assert time.monotonic() < deadline, f"tx {txhash} not committed in {timeout_s}s"
            time.sleep(0.1)


def sent_ok(result: subprocess.CompletedProcess[str], rpc: str) -> None:
    """A ``gonkad tx … --output json`` that was accepted and then committed with code 0."""
    assert result.returncode == 0, result.stdout + result.stderr
    assert int(committed(CometRPC(rpc), json.loads(result.stdout)["txhash"])["tx_result"].get("code", 0)) == 0


def balance(querier: Querier, address: str) -> int:
    reply = querier.query(
        "/cosmos.bank.v1beta1.Query/Balance",
        bank_query.QueryBalanceRequest(address=address, denom=DENOM),
        bank_query.QueryBalanceResponse,
    )
    return int(reply.balance.amount or 0)


def vesting(querier: Querier, address: str) -> int:
    reply = querier.query(
        "/gonka.vesting.v1.Query/Locked",
        vesting_query.QueryLockedRequest(address=address),
        vesting_query.QueryLockedResponse,
    )
    return sum(int(coin.amount) for coin in reply.vesting if coin.denom == DENOM)


def supply(querier: Querier, height: int = 0) -> int:
    """The supply at ``height`` (0: now)."""
    reply = querier.query(
        "/cosmos.bank.v1beta1.Query/SupplyOf",
        bank_query.QuerySupplyOfRequest(denom=DENOM),
        bank_query.QuerySupplyOfResponse,
        height,
    )
    return int(reply.amount.amount)


def inference(querier: Querier, inference_id: str, timeout_s: float = 20) -> inference_pb2.Inference:
    """The inference once its start is committed (the TA answers after CheckTx, before the block)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return querier.query(
                QUERY + "Inference", query_pb2.QueryInferenceRequest(id=inference_id), query_pb2.QueryInferenceResponse
            ).inference
        except RPCError:
            assert time.monotonic() < deadline, f"inference {inference_id} not on chain in {timeout_s}s"
            time.sleep(0.1)


def finished(querier: Querier, inference_id: str, timeout_s: float = 20) -> inference_pb2.Inference:
    """The inference once the executor's finish is committed."""
    deadline = time.monotonic() + timeout_s
    while True:
        record = inference(querier, inference_id, timeout_s)
        if record.status != inference_pb2.STATUS_STARTED:
            return record
        assert time.monotonic() < deadline, f"inference {inference_id} not finished in {timeout_s}s"
        time.sleep(0.1)


def inferences_of(querier: Querier, requester: str = "", executor: str = "") -> list[inference_pb2.Inference]:
    """Every inference the chain keeps for ``requester`` (or with ``executor``), all pages."""
    found: list[inference_pb2.Inference] = []
    key = b""
    while True:
        page = querier.query(
            QUERY + "Inferences",
            query_pb2.QueryInferencesRequest(
                requester=requester, executor=executor, pagination={"key": key, "limit": 100}
            ),
            query_pb2.QueryInferencesResponse,
        )
        found += page.inferences
        key = page.pagination.next_key
        if not key:
            return found


def check_accounting(querier: Querier, executors: list[tuple[str, str]], genesis_supply: int) -> None:
    """The accounting of a whole run of an inference network, at its end: each host's own count of the answers
    it served (its executor's ``served``, at ``url``) equals the inferences the chain paid it for (its finisher
    dropped none and left none pending, and no answer it relayed went unfinished), each paid exactly its tokens;
    the supply is ``genesis_supply`` (nothing minted: the tests' issuance cap is 0; nothing burned); the account
    that holds governance deposits holds at least the deposits of the proposals the chain keeps."""
    for address, url in executors:
        deadline = time.monotonic() + 60
        while True:  # the finisher settled all (on its host's node), and ``querier``'s node has those blocks too
            state = httpx.get(f"{url}/v1/executor/status", timeout=10).json()
            paid = [i for i in inferences_of(querier, executor=address) if i.status == inference_pb2.STATUS_FINISHED]
            if not state["pending"] and len(paid) >= state["finished"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert (state["pending"], state["dropped"], state["unfinished"]) == (0, 0, 0), (address, state)
        assert state["served"] == state["finished"] == len(paid), (address, state, len(paid))
        assert all(i.payment == i.completion_tokens * i.fee_per_token for i in paid)
    assert supply(querier) == genesis_supply
    proposals = querier.query(
        "/cosmos.gov.v1.Query/Proposals", gov_query.QueryProposalsRequest(), gov_query.QueryProposalsResponse
    ).proposals
    held = sum(int(coin.amount) for proposal in proposals for coin in proposal.total_deposit if coin.denom == DENOM)
    assert balance(querier, bech32.encode(module_address("gov_deposits"))) >= held
