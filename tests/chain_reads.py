"""Reads of a running chain that the inference network's localnet tests share: balances, locked (vesting)
coins, supply, inferences as they start and finish, committed txs, and ``gonkad`` as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query

from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from protogen.gonka.vesting.v1 import query_pb2 as vesting_query
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError

DENOM = "ngonka"
QUERY = "/gonka.inference.v1.Query/"


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


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
    reply = querier.query("/cosmos.bank.v1beta1.Query/Balance", bank_query.QueryBalanceRequest(
        address=address, denom=DENOM), bank_query.QueryBalanceResponse)
    return int(reply.balance.amount or 0)


def vesting(querier: Querier, address: str) -> int:
    reply = querier.query("/gonka.vesting.v1.Query/Locked", vesting_query.QueryLockedRequest(address=address),
                          vesting_query.QueryLockedResponse)
    return sum(int(coin.amount) for coin in reply.vesting if coin.denom == DENOM)


def supply(querier: Querier) -> int:
    reply = querier.query("/cosmos.bank.v1beta1.Query/SupplyOf", bank_query.QuerySupplyOfRequest(denom=DENOM),
                          bank_query.QuerySupplyOfResponse)
    return int(reply.amount.amount)


def inference(querier: Querier, inference_id: str, timeout_s: float = 20) -> inference_pb2.Inference:
    """The inference once its start is committed (the TA answers after CheckTx, before the block)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return querier.query(QUERY + "Inference", query_pb2.QueryInferenceRequest(id=inference_id),
                                 query_pb2.QueryInferenceResponse).inference
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
        page = querier.query(QUERY + "Inferences", query_pb2.QueryInferencesRequest(
            requester=requester, executor=executor, pagination={"key": key, "limit": 100}),
            query_pb2.QueryInferencesResponse)
        found += page.inferences
        key = page.pagination.next_key
        if not key:
            return found
