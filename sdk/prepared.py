"""Transactions decoded and checked without state, kept between CheckTx and the block that includes them.

Decoding, the unknown-field check and every message's stateless checks are pure functions of the tx
bytes, and a tx is admitted by CheckTx before a block carries it: doing that work once instead of twice
pays for the strict decoding on the consensus path. The cache is bounded by the bytes of the txs it
holds (a decoded tx takes a few times its size), evicting the oldest first; a miss only costs the work.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from sdk.module import MsgRoute
from sdk.tx import Tx

DEFAULT_BUDGET_BYTES = 16 << 20


@dataclass(frozen=True)
class PreparedTx:
    """A tx past every stateless check: decoded, its messages routed and decoded, its signers in order.
    Shared by the runs that use it, so nothing may change it."""

    tx: Tx
    messages: list[tuple[MsgRoute, Message]]
    signers: list[bytes]


class PreparedCache:
    """``prepare(raw)`` through a byte-bounded cache keyed by the tx bytes; failures are never kept."""

    def __init__(self, prepare: Callable[[bytes], PreparedTx], budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self._prepare = prepare
        self._budget = budget_bytes
        self._held = 0
        self._entries: OrderedDict[bytes, PreparedTx] = OrderedDict()

    def get(self, raw: bytes) -> PreparedTx:
        prepared = self._entries.get(raw)
        if prepared is not None:
            return prepared
        prepared = self._prepare(raw)
        if len(raw) <= self._budget:
            self._entries[raw] = prepared
            self._held += len(raw)
            while self._held > self._budget:
                evicted, _ = self._entries.popitem(last=False)
                self._held -= len(evicted)
        return prepared
