"""The shapes of a gRPC service's methods, shared by the server and the services it serves.

They live apart from ``server.py`` so that a service names its methods' type without importing the server
that imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from google.protobuf.message import Message

Handler = Callable[[Any], Awaitable[Message]]
Methods = dict[str, tuple[type[Message], Handler]]
"""One service's implemented methods: method name -> (request type, coroutine answering it)."""


class CallContext(Protocol):
    """What a handler reads of its call besides the request: a gRPC call's ``grpc.aio.ServicerContext``, or the
    REST gateway's stand-in for one (sdk/rest), which answers the same handlers."""

    def invocation_metadata(self) -> Sequence[tuple[str, str]] | None: ...

    async def send_initial_metadata(self, metadata: Sequence[tuple[str, str]]) -> None: ...


ContextHandler = Callable[[Any, CallContext], Awaitable[Message]]
"""A method that also reads the call's metadata and may send its own (module queries: the block height)."""
ContextMethods = dict[str, tuple[type[Message], ContextHandler]]


class Service(Protocol):
    """A gRPC service the node serves besides the modules' queries (tx, tendermint)."""

    NAME: str

    def methods(self) -> Methods: ...
