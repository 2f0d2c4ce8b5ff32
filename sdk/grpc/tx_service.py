"""cosmos.tx.v1beta1.Service: BroadcastTx, GetTx and GetTxsEvent through CometBFT's RPC, Simulate in the app.

Simulate runs on the node's query workers over a snapshot of the committed state, writing only a
throwaway branch, within the node's simulation gas limit; the RPC calls run in a thread because
CometBFT answers them only after asking this same loop (CheckTx).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from concurrent.futures import Executor
from functools import partial
from typing import Any

from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as sdk_abci
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2, tx_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf import json_format

from sdk.abci.blocks import is_injected_entry
from sdk.baseapp import BaseApp
from sdk.baseapp.simulate_service import simulate_response, simulated_tx_bytes
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import pack
from sdk.errors import ErrInvalidRequest, ErrNotFound
from sdk.grpc.comet import call_with_client_input, comet_page, per_page
from sdk.grpc.methods import Methods
from sdk.tx import decode_tx
from sdk.workers import run_job

_ORDER_BY = {service_pb2.ORDER_BY_ASC: "asc", service_pb2.ORDER_BY_DESC: "desc"}
"""tx_search's ``order_by``; unspecified is CometBFT's default, oldest first."""
_HEIGHT_KEY = "tx.height"
_EVENT_FORMAT = "{eventType}.{eventAttribute}={value}"

_BROADCAST_RPC = {
    service_pb2.BROADCAST_MODE_SYNC: "broadcast_tx_sync",
    service_pb2.BROADCAST_MODE_ASYNC: "broadcast_tx_async",
}


def message_logs(events: Sequence[abci.Event]) -> list[sdk_abci.ABCIMessageLog]:
    """Per-message logs as pre-0.50 SDK clients read them.

    Each message's events start at the ``message`` event with an ``action`` that BaseApp emits before
    running it; the ante handler's events come before the first and belong to no message.
    """
    logs: list[sdk_abci.ABCIMessageLog] = []
    for event in events:
        if event.type == "message" and any(a.key == "action" for a in event.attributes):
            logs.append(sdk_abci.ABCIMessageLog(msg_index=len(logs)))
        if logs:
            logs[-1].events.append(
                sdk_abci.StringEvent(
                    type=event.type, attributes=[sdk_abci.Attribute(key=a.key, value=a.value) for a in event.attributes]
                )
            )
    return logs


def tx_response(
    height: int, txhash: str, result: abci.ExecTxResult, tx: tx_pb2.Tx, timestamp: str
) -> sdk_abci.TxResponse:
    return sdk_abci.TxResponse(
        height=height,
        txhash=txhash.upper(),
        codespace=result.codespace,
        code=result.code,
        data=result.data.hex().upper(),
        raw_log=result.log,
        logs=message_logs(result.events) if result.code == 0 else [],
        info=result.info,
        gas_wanted=result.gas_wanted,
        gas_used=result.gas_used,
        tx=pack(tx),
        timestamp=timestamp,
        events=result.events,
    )


def tx_of(found: dict[str, Any], timestamp: str) -> tuple[tx_pb2.Tx, sdk_abci.TxResponse]:
    """A transaction as CometBFT's ``/tx`` and ``/tx_search`` return it, with its block's time, as the SDK
    answers it."""
    decoded = decode_tx(base64.b64decode(found["tx"]))
    tx = tx_pb2.Tx(body=decoded.body, auth_info=decoded.auth_info, signatures=decoded.raw.signatures)
    result = json_format.ParseDict(found["tx_result"], abci.ExecTxResult(), ignore_unknown_fields=True)
    return tx, tx_response(int(found["height"]), found["hash"], result, tx, timestamp)


def events_query(req: service_pb2.GetTxsEventRequest) -> str:
    """The tx_search query: the SDK's ``query`` (v0.50+), or else its older ``events`` list joined by AND.

    In the older form values may come unquoted (``message.sender=gonka1…``); they are quoted as the SDK
    quoted them, except ``tx.height``'s number. CometBFT checks the query's syntax.
    """
    if req.query:
        return req.query
    if not req.events:
        raise ErrInvalidRequest.wrap("query cannot be empty")
    conditions = []
    for event in req.events:
        key, _, value = event.partition("=")
        if event.count("=") != 1 or not key or not value:
            raise ErrInvalidRequest.wrap(f"invalid event {event!r}; it should be of the format {_EVENT_FORMAT}")
        quoted = value.startswith("'") or key.rstrip("<>") == _HEIGHT_KEY
        conditions.append(f"{key}={value}" if quoted else f"{key}='{value}'")
    return " AND ".join(conditions)


def txs_page(req: service_pb2.GetTxsEventRequest) -> tuple[int, int]:
    """tx_search's page and per_page: ``page`` and ``limit`` (SDK v0.46+; 0: the first page, 100 per page),
    else the older ``pagination``'s offset and limit."""
    if not (req.page or req.limit) and req.HasField("pagination"):
        return comet_page(req.pagination.offset, req.pagination.limit)
    return req.page or 1, per_page(req.limit)


class TxService:
    NAME = "cosmos.tx.v1beta1.Service"

    def __init__(self, app: BaseApp, rpc: CometRPC, workers: Executor | None = None) -> None:
        self.app = app
        self.rpc = rpc
        self.workers = workers

    def methods(self) -> Methods:
        return {
            "BroadcastTx": (service_pb2.BroadcastTxRequest, self.broadcast_tx),
            "Simulate": (service_pb2.SimulateRequest, self.simulate),
            "GetTx": (service_pb2.GetTxRequest, self.get_tx),
            "GetTxsEvent": (service_pb2.GetTxsEventRequest, self.get_txs_event),
        }

    async def block_time(self, height: int | str) -> str:
        return (await asyncio.to_thread(self.rpc.call, "header", height=str(height)))["header"]["time"]

    async def broadcast_tx(self, req: service_pb2.BroadcastTxRequest) -> service_pb2.BroadcastTxResponse:
        if not req.tx_bytes:
            raise ErrInvalidRequest.wrap("invalid empty tx")
        method = _BROADCAST_RPC.get(req.mode)
        if method is None:
            raise ErrInvalidRequest.wrap(
                f"broadcast mode {req.mode} is not supported (BLOCK is deprecated); use "
                "BROADCAST_MODE_SYNC or BROADCAST_MODE_ASYNC"
            )
        result = await asyncio.to_thread(self.rpc.call, method, tx=base64.b64encode(req.tx_bytes).decode())
        return service_pb2.BroadcastTxResponse(
            tx_response=sdk_abci.TxResponse(
                txhash=result["hash"].upper(),
                code=int(result["code"]),
                codespace=result.get("codespace") or "",
                raw_log=result.get("log") or "",
                data=base64.b64decode(result.get("data") or "").hex().upper(),
            )
        )

    async def simulate(self, req: service_pb2.SimulateRequest) -> service_pb2.SimulateResponse:
        raw = simulated_tx_bytes(req)
        return simulate_response(await run_job(self.workers, self.app.committed_job(partial(self.app.simulate, raw))))

    async def get_tx(self, req: service_pb2.GetTxRequest) -> service_pb2.GetTxResponse:
        try:
            tx_hash = bytes.fromhex(req.hash)
        except ValueError:
            raise ErrInvalidRequest.wrap(f"tx hash {req.hash!r} is not hex") from None
        if len(tx_hash) != 32:
            raise ErrInvalidRequest.wrap(f"tx hash must be 32 bytes, got {len(tx_hash)}")
        try:
            found = await asyncio.to_thread(self.rpc.tx, tx_hash)
        except RPCError as err:
            if "not found" in str(err):
                raise ErrNotFound.wrap(f"tx {req.hash.upper()} not found") from None
            raise
        if is_injected_entry(base64.b64decode(found["tx"])):
            raise ErrNotFound.wrap(f"{req.hash.upper()} is a module's proposal entry, not a tx")
        tx, response = tx_of(found, await self.block_time(found["height"]))
        return service_pb2.GetTxResponse(tx=tx, tx_response=response)

    async def get_txs_event(self, req: service_pb2.GetTxsEventRequest) -> service_pb2.GetTxsEventResponse:
        """Transactions whose indexed events match (CometBFT's tx_search; which events a node indexes is its
        app.toml ``index_events``), one page of them with the total count."""
        query = events_query(req)
        page, size = txs_page(req)
        found = await call_with_client_input(
            self.rpc,
            "tx_search",
            f"search {query!r}, page {page} ({size} per page)",
            query=query,
            page=str(page),
            per_page=str(size),
            order_by=_ORDER_BY.get(req.order_by, ""),
        )
        # A module's injected proposal entry (sdk/abci/blocks.py) is indexed by CometBFT like a tx (tx.height)
        # but is none: it is left out, and out of the total.
        entries = [t for t in found["txs"] if not is_injected_entry(base64.b64decode(t["tx"]))]
        times = {height: await self.block_time(height) for height in {t["height"] for t in entries}}
        txs = [tx_of(t, times[t["height"]]) for t in entries]
        total = int(found["total_count"]) - (len(found["txs"]) - len(entries))
        return service_pb2.GetTxsEventResponse(
            txs=[tx for tx, _ in txs],
            tx_responses=[response for _, response in txs],
            pagination=pagination_pb2.PageResponse(total=total),
            total=total,
        )
