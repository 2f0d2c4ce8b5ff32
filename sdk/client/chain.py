"""``ChainClient``: what every program with a key on the chain shares (the TA's view, the host's finisher):
queries over one kept-open gRPC channel (else CometBFT RPC's ABCI query), CometBFT's ``status`` cached briefly,
an account's spendable balance, and a ``TxSigner``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from google.protobuf.message import Message

from sdk.client.querier import Querier, grpc_call
from sdk.client.signer import Refusal, TxRefused, TxSigner
from sdk.client.txbuilder import address_of
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.services import cosmos

M = TypeVar("M", bound=Message)


class ChannelQuerier(Querier):
    """``Querier`` with one gRPC channel kept open (channels are thread-safe), rather than one per query."""

    def __init__(self, node: str, grpc_addr: str | None, timeout: float) -> None:
        super().__init__(node, grpc_addr, timeout)
        self.channel = grpc.insecure_channel(grpc_addr) if grpc_addr else None

    def raw(self, path: str, data: bytes, height: int = 0) -> bytes:
        if self.channel is None:
            return super().raw(path, data, height)
        return grpc_call(self.channel, path, data, self.timeout, height)

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
    ``status`` (cached ``status_ttl_s``), and its ``TxSigner`` (CheckTx refusals raised as ``refused`` makes them)."""

    def __init__(
        self,
        node: str,
        key: secp256k1.PrivateKey,
        grpc_addr: str | None,
        chain_id: str,
        gas_limit: int,
        fees: Coins,
        timeout_s: float,
        status_ttl_s: float,
        clock: Callable[[], float],
        refused: Refusal = TxRefused,
    ) -> None:
        self.querier = ChannelQuerier(node, grpc_addr, timeout_s)
        self.rpc = self.querier.rpc
        self.key = key
        self.address = address_of(key)
        self._chain_id = chain_id
        self._status = Cached(status_ttl_s, self.rpc.status, clock)
        self.signer = TxSigner(self.rpc, key, self.chain_id, gas_limit, fees, refused)

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

    def spendable(self, address: str, denom: str) -> int:
        """What ``address`` can spend of ``denom`` now (bank's ``SpendableBalanceByDenom``)."""
        reply = self._query(
            cosmos("bank").query + "SpendableBalanceByDenom",
            bank_query.QuerySpendableBalanceByDenomRequest(address=address, denom=denom),
            bank_query.QuerySpendableBalanceByDenomResponse,
        )
        return int(reply.balance.amount or 0)
