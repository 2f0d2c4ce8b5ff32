"""What a module offers the app: its key prefix, genesis, message and query routes, block hooks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from sdk.context import Context

MsgHandler = Callable[[Context, Any], Message | None]
QueryHandler = Callable[[Context, Any], Message]


@dataclass(frozen=True)
class MsgRoute:
    """How to decode, check, authorise and execute one message type."""

    msg_type: type[Message]
    signers: Callable[[Any], list[bytes]]
    validate_basic: Callable[[Any], None]
    handler: MsgHandler


@dataclass(frozen=True)
class QueryRoute:
    """How to decode and answer one query.

    ``bounded``: the answer reads a few keys however large the state (a point lookup), so the node answers
    it at once on its event loop, where it costs less than the hop to a query worker; every other query
    (listings, pagination) runs on a worker so that consensus never waits behind it.
    """

    request_type: type[Message]
    handler: QueryHandler
    bounded: bool = False


class Module(Protocol):
    name: str
    store_prefix: bytes

    def default_genesis(self) -> dict[str, Any]: ...
    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None: ...
    def msg_routes(self) -> dict[str, MsgRoute]: ...
    def query_routes(self) -> dict[str, QueryRoute]: ...
    def begin_block(self, ctx: Context) -> None: ...
    def end_block(self, ctx: Context) -> None: ...


class BaseModule:
    """Empty defaults, so a module states only the hooks and routes it has."""

    name: str
    store_prefix: bytes

    def default_genesis(self) -> dict[str, Any]:
        return {}

    def msg_routes(self) -> dict[str, MsgRoute]:
        return {}

    def query_routes(self) -> dict[str, QueryRoute]:
        return {}

    def begin_block(self, ctx: Context) -> None:
        return None

    def end_block(self, ctx: Context) -> None:
        return None


def type_url(msg_type: type[Message]) -> str:
    return "/" + msg_type.DESCRIPTOR.full_name
