"""Verifiers of x/inference's messages for programs: what a start transaction says of one inference for one host."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from protogen.gonka.inference.v1 import tx_pb2
from sdk.crypto import bech32
from sdk.crypto.request import inference_id as request_id
from sdk.errors import ABCIError
from sdk.module import type_url
from sdk.tx import decode_tx

START, STARTS = type_url(tx_pb2.MsgStartInference), type_url(tx_pb2.MsgStartInferences)
REASSIGN = type_url(tx_pb2.MsgReassignInference)


@dataclass(frozen=True)
class Named:
    """What a start transaction says of one inference for this host: the start itself (its requester, escrow and
    terms), or None for a reassignment to it (its escrow is held already, its terms are the record's)."""

    start: tx_pb2.MsgStartInference | None

    @property
    def escrow(self) -> int:
        return self.start.max_tokens * self.start.fee_per_token if self.start is not None else 0


def named_escrow(start_tx: bytes, inference: bytes, executor: str) -> Named | None:
    """The start in ``start_tx`` of ``inference`` with ``executor``, or a reassignment of it to ``executor``; None
    when the transaction names neither."""
    return named_in(start_tx, executor).get(inference)


@lru_cache(maxsize=256)
def named_in(start_tx: bytes, executor: str) -> dict[bytes, Named]:
    """Every inference ``start_tx`` names with ``executor`` (the first message naming it, as read in order).
    Cached, keyed by the exact bytes: a batch of starts arrives once for each of them, and what it names is a
    pure function of its bytes."""
    try:
        tx = decode_tx(start_tx)
    except ABCIError:
        return {}
    named: dict[bytes, Named] = {}
    for message in tx.messages:
        if message.type_url in (START, STARTS):
            starts = (
                [tx_pb2.MsgStartInference.FromString(message.value)]
                if message.type_url == START
                else list(tx_pb2.MsgStartInferences.FromString(message.value).starts)
            )
            for start in starts:
                try:
                    requester = bech32.decode(start.requester)
                except ValueError:
                    continue
                if start.executor == executor:
                    named.setdefault(request_id(requester, start.body_hash, start.timestamp_ns), Named(start))
        elif message.type_url == REASSIGN:
            reassign = tx_pb2.MsgReassignInference.FromString(message.value)
            if reassign.executor == executor:
                named.setdefault(reassign.id, Named(None))
    return named
