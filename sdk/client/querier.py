"""Queries by gRPC method path, over CometBFT RPC (ABCI query) or directly over gRPC.

Both transports carry the same request and response bytes, so every module's query works over
either with no per-query code.
"""

from __future__ import annotations

from typing import TypeVar

import grpc
from google.protobuf.message import Message

from sdk.client.rpc import CometRPC, RPCError, RPCNotFound
from sdk.errors import ErrNotFound

M = TypeVar("M", bound=Message)


class Querier:
    def __init__(self, node: str, grpc_addr: str | None = None, timeout: float = 10.0) -> None:
        self.rpc = CometRPC(node, timeout=timeout)
        self.grpc_addr = grpc_addr
        self.timeout = timeout

    def raw(self, path: str, data: bytes, height: int = 0) -> bytes:
        """The answer bytes at ``height`` (0: the latest committed block), as the Cosmos SDK reads a kept height:
        ABCI query's ``height``, or gRPC's ``x-cosmos-block-height`` header."""
        if self.grpc_addr:
            with grpc.insecure_channel(self.grpc_addr) as channel:
                return grpc_call(channel, path, data, self.timeout, height)
        reply = self.rpc.abci_query(path, data, height=height)
        if reply.get("code"):
            failure = reply.get("log") or f"query failed with code {reply['code']}"
            if (reply.get("codespace"), int(reply["code"])) == (ErrNotFound.codespace, ErrNotFound.code):
                raise RPCNotFound(failure)
            raise RPCError(failure)
        return reply["value"]

    def query(self, path: str, request: Message, response_type: type[M], height: int = 0) -> M:
        return response_type.FromString(self.raw(path, request.SerializeToString(), height))


def grpc_call(channel: grpc.Channel, path: str, data: bytes, timeout: float, height: int = 0) -> bytes:
    """One raw unary call on ``channel``; at ``height`` when not 0; a failed call is ``RPCError``."""
    metadata = (("x-cosmos-block-height", str(height)),) if height else None
    call = channel.unary_unary(path, request_serializer=None, response_deserializer=None)
    try:
        return call(data, timeout=timeout, metadata=metadata)
    except grpc.RpcError as exc:
        failure = RPCNotFound if exc.code() == grpc.StatusCode.NOT_FOUND else RPCError
        raise failure(f"{exc.code().name}: {exc.details()}") from None
