"""``ChainClient``: what every program with a key on the chain shares (the TA's view, the host's finisher):
queries over one kept-open gRPC channel (else CometBFT RPC's ABCI query), CometBFT's ``status`` cached briefly,
the inference record, and a ``TxSigner``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.client.querier import Querier
from sdk.client.rpc import RPCError
from sdk.client.txbuilder import address_of
from sdk.coins import Coins
from sdk.crypto import secp256k1
from x.inference.client.signer import TxSigner
from x.inference.query_server import GONKA

M = TypeVar("M", bound=Message)


class ChannelQuerier(Querier):
    """``Querier`` with one gRPC channel kept open (channels are thread-safe), rather than one per query."""

    def __init__(self, node: str, grpc_addr: str | None, timeout: float) -> None:
        super().__init__(node, grpc_addr, timeout)
        self.channel = grpc.insecure_channel(grpc_addr) if grpc_addr else None

    def raw(self, path: str, data: bytes) -> bytes:
        if self.channel is None:
            return super().raw(path, data)
        call = self.channel.unary_unary(path, request_serializer=None, response_deserializer=None)
        try:
            return call(data, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise RPCError(f"{exc.code().name}: {exc.details()}") from None  # type: ignore[attr-defined]

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()


class Cached:
    """One value, recomputed when older than ``ttl_s``; thread-safe (one refresh at a time)."""

    def __init__(self, ttl_s: float, load: Callable[[], Any], clock: Callable[[], float]) -> None:
        self.ttl_s, self.load, self.clock = ttl_s, load, clock
        self.value: Any = None
        self.at = float("-inf")
        self.lock = threading.Lock()

    def get(self) -> Any:
        with self.lock:
            if self.clock() - self.at >= self.ttl_s:
                self.value = self.load()
                self.at = self.clock()
            return self.value


class ChainClient:
    """What a program with a key on the chain shares: queries (gRPC when ``grpc_addr`` is given), CometBFT's
    ``status`` (cached ``status_ttl_s``), and its ``TxSigner``."""

    def __init__(self, node: str, key: secp256k1.PrivateKey, grpc_addr: str | None, chain_id: str, gas_limit: int,
                 fees: Coins, timeout_s: float, status_ttl_s: float, clock: Callable[[], float]) -> None:
        self.querier = ChannelQuerier(node, grpc_addr, timeout_s)
        self.rpc = self.querier.rpc
        self.key = key
        self.address = address_of(key)
        self._chain_id = chain_id
        self._status = Cached(status_ttl_s, self.rpc.status, clock)
        self.signer = TxSigner(self.rpc, key, self.chain_id, gas_limit, fees)

    def close(self) -> None:
        self.querier.close()

    def _query(self, path: str, request: Message, response_type: type[M]) -> M:
        return self.querier.query(path, request, response_type)

    def chain_id(self) -> str:
        if not self._chain_id:
            self._chain_id = str(self._status.get()["node_info"]["network"])
        return self._chain_id

    def latest_height(self) -> int:
        return int(self._status.get()["sync_info"]["latest_block_height"])

    def inference(self, inference_id: bytes) -> inference_pb2.Inference | None:
        """The committed record; None when the chain does not know the id (or the node cannot tell)."""
        try:
            return self._query(GONKA + "Inference", query_pb2.QueryInferenceRequest(id=inference_id.hex()),
                               query_pb2.QueryInferenceResponse).inference
        except RPCError:
            return None
