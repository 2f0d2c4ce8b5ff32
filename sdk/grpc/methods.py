"""The shapes of a gRPC service's methods, shared by the server and the services it serves.

They live apart from ``server.py`` so that a service names its methods' type without importing the server
that imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import grpc
from google.protobuf.message import Message

Handler = Callable[[Any], Awaitable[Message]]
Methods = dict[str, tuple[type[Message], Handler]]
"""One service's implemented methods: method name -> (request type, coroutine answering it)."""
ContextHandler = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Message]]
"""A method that also reads the call's metadata and may send its own (module queries: the block height)."""
ContextMethods = dict[str, tuple[type[Message], ContextHandler]]


class Service(Protocol):
    """A gRPC service the node serves besides the modules' queries (tx, tendermint)."""

    NAME: str

    def methods(self) -> Methods: ...
