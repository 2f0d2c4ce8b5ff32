"""What a module offers the app: its key prefix, genesis, message and query routes, block hooks.

``pre_block`` (the SDK's PreBlocker) runs first in FinalizeBlock, on the block's own state and unguarded: what
it raises halts the node before anything of the block is committed (x/upgrade stops there at a plan's height).
Each module states its ``consensus_version`` and the ``migrations`` from each older one, which an upgrade
runs in order (``sdk/migrations.py``).

Block hooks (``begin_block``, ``end_block``) get the whole block as a ``BlockInfo`` and run in a branch of
the block's state: a hook that raises is logged by module and hook, its writes are discarded, and the block
goes on. The ABCI 2.0 hooks (``extend_vote``, ``verify_vote_extension``, ``prepare_proposal``,
``process_proposal``, ``deliver_entry``) are composed by BaseApp in app order; their byte formats are in
``sdk/abci/blocks.py`` and the whole interface is described in ``sdk/README.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from sdk.abci.blocks import BlockInfo, VoteExtension
from sdk.context import Context
from sdk.invariants import Invariant
from sdk.store.cachekv import CacheKV
from sdk.telemetry.figures import Figure

log = logging.getLogger("gonkad.app")

MsgHandler = Callable[[Context, Any], Message | None]
QueryHandler = Callable[[Context, Any], Message]
Migration = Callable[[Context], None]
"""Moves a module's state from one consensus version to the next, in the block of an upgrade."""


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
    consensus_version: int

    def migrations(self) -> dict[int, Migration]: ...
    def pre_block(self, ctx: Context, block: BlockInfo) -> None: ...

    def default_genesis(self) -> dict[str, Any]: ...
    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None: ...
    def export_genesis(self, ctx: Context) -> dict[str, Any]: ...
    def msg_routes(self) -> dict[str, MsgRoute]: ...
    def query_routes(self) -> dict[str, QueryRoute]: ...
    def begin_block(self, ctx: Context, block: BlockInfo) -> None: ...
    def end_block(self, ctx: Context, block: BlockInfo) -> None: ...
    def configure(self, config: Mapping[str, Any]) -> None: ...
    def extend_vote(self, ctx: Context, block: BlockInfo) -> bytes: ...
    def verify_vote_extension(self, ctx: Context, block: BlockInfo, validator: bytes, extension: bytes) -> bool: ...
    def prepare_proposal(self, ctx: Context, block: BlockInfo, extensions: Sequence[VoteExtension]) -> bytes | None: ...
    def process_proposal(self, ctx: Context, block: BlockInfo, entry: bytes | None) -> bool: ...
    def deliver_entry(self, ctx: Context, block: BlockInfo, entry: bytes) -> None: ...
    def invariants(self) -> dict[str, Invariant]: ...
    def metrics(self, ctx: Context) -> list[Figure]: ...


class BaseModule:
    """Empty defaults, so a module states only the hooks and routes it has."""

    name: str
    store_prefix: bytes
    consensus_version: int = 1
    """The version of the module's state layout: raised by one with each change an upgrade must migrate."""

    def migrations(self) -> dict[int, Migration]:
        """By version ``k``: the migration of this module's state from ``k`` to ``k + 1``; one for every
        version below ``consensus_version`` that a running chain may hold."""
        return {}

    def pre_block(self, ctx: Context, block: BlockInfo) -> None:
        """Runs before every other hook and tx of the block, in its state, unguarded: raising halts the node
        and nothing of the block is committed. Keep it to a few reads unless it acts."""
        return None

    def default_genesis(self) -> dict[str, Any]:
        return {}

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        """All of the module's state as the genesis JSON its ``init_genesis`` reads, so a chain started from
        the export has the same state. No default: a module that forgot would export a chain without it."""
        raise NotImplementedError(f"module {self.name} does not export its genesis")

    def msg_routes(self) -> dict[str, MsgRoute]:
        return {}

    def query_routes(self) -> dict[str, QueryRoute]:
        return {}

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        return None

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        return None

    def configure(self, config: Mapping[str, Any]) -> None:
        """Node-local settings (from the node's home, never from state, e.g. a signing key), given once at
        app construction. They must not change what the state machine computes, only what this node adds
        (its vote extension, its proposals). Default: a module takes none, so any given is a mistake."""
        if config:
            raise ValueError(f"module {self.name} takes no node-local config, got {sorted(config)}")

    def extend_vote(self, ctx: Context, block: BlockInfo) -> bytes:
        """This module's part of this node's vote extension for ``block`` (b"": none). ``ctx`` reads the last
        committed state; its writes are discarded."""
        return b""

    def verify_vote_extension(self, ctx: Context, block: BlockInfo, validator: bytes, extension: bytes) -> bool:
        """Whether another validator's part (b"" when it sent none) of its vote for ``block`` (height, hash
        and header app hash only) is acceptable; False rejects its vote. Must be deterministic: every honest
        node must answer alike."""
        return not extension

    def prepare_proposal(self, ctx: Context, block: BlockInfo, extensions: Sequence[VoteExtension]) -> bytes | None:
        """As proposer: a payload to inject at the head of the proposal (None: nothing). ``extensions`` are
        this module's parts of the last height's vote extensions, as CometBFT gave them to the proposer."""
        return None

    def process_proposal(self, ctx: Context, block: BlockInfo, entry: bytes | None) -> bool:
        """Whether a proposal is acceptable as far as this module goes; ``entry`` is the payload it carries
        for this module (None: none). False rejects the proposal. Default: accept only without an entry."""
        return entry is None

    def deliver_entry(self, ctx: Context, block: BlockInfo, entry: bytes) -> None:
        """Execute this module's injected entry in FinalizeBlock (after begin_block, before the txs).
        Raising fails the entry (its writes discarded); the block goes on."""
        raise NotImplementedError(f"module {self.name} takes no injected proposal entries")

    def invariants(self) -> dict[str, Invariant]:
        """What must hold of this module's state after every block, by name (without the module prefix)."""
        return {}

    def metrics(self, ctx: Context) -> list[Figure]:
        """The module's key figures for the node's metrics (sdk/telemetry), read from ``ctx``: the last
        committed state, on the metrics server's thread, at most once per height; never in a block. Keep it
        to reads that stay cheap as the chain grows."""
        return []


def type_url(msg_type: type[Message]) -> str:
    return "/" + msg_type.DESCRIPTOR.full_name


def run_hook(ctx: Context, what: str, call: Callable[[Context], None]) -> Exception | None:
    """Run a hook (a module's block hook, or an epoch hook another module implements) in a branch of
    ``ctx``: its writes, events and validator updates land only if it returns. A raising hook is logged
    (``what`` names it) and its writes discarded, the same on every node, so the block goes on. Returns
    the failure."""
    branch = CacheKV(ctx.store)
    hook_ctx = ctx.with_store(branch)
    try:
        call(hook_ctx)
    except Exception as exc:  # noqa: BLE001 - a failing hook must not halt the node
        log.exception("%s failed at height %d; its writes are discarded", what, ctx.header.height)
        return exc
    branch.write()
    ctx.events.extend(hook_ctx.events)
    ctx.validator_updates.extend(hook_ctx.validator_updates)
    return None
