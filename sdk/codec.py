"""Protobuf bytes from users into messages: every malformed input becomes one registered error.

A parse error must never escape as a traceback (code 1): the caller names the error kind that fits what
was being parsed (a tx, a public key, a query request).
"""

from __future__ import annotations

from functools import cache
from typing import TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from sdk.errors import ErrorDef, ErrTxDecode

M = TypeVar("M", bound=Message)

NON_CRITICAL_BIT = 1 << 10
"""Field numbers with bit 11 set (1024+) are non-critical: a node that does not know them may ignore them."""


def decode(message_type: type[M], data: bytes, what: str, error: ErrorDef = ErrTxDecode) -> M:
    msg = message_type()
    try:
        msg.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise error.wrap(f"malformed {what}: {exc}") from None
    return msg


def decode_strict(message_type: type[M], data: bytes, what: str, allow_non_critical: bool = False) -> M:
    """``decode``, refusing fields this node does not know in the message and every message inside it, as
    the Cosmos SDK's decoder does: a signer may have meant something by them that this node would drop.

    With ``allow_non_critical`` unknown fields numbered 1024 and up pass (the SDK allows them in a TxBody).
    Runs on every tx, so the common case costs two sizes and one discard in C; only a message that had
    unknown fields is walked in Python to tell which.
    """
    msg = decode(message_type, data, what)
    if not _message_fields(msg.DESCRIPTOR):  # no nested messages: the top level is all there is to check
        unknown = len(UnknownFieldSet(msg)) > 0
    else:
        size = msg.ByteSize()
        msg.DiscardUnknownFields()
        unknown = msg.ByteSize() != size
    if unknown:
        found = _first_unknown(decode(message_type, data, what), allow_non_critical)
        if found is not None:
            path, number = found
            raise ErrTxDecode.wrap(f"{'.'.join((what, *path))} has unknown field {number}")
    return msg


def _first_unknown(msg: Message, allow_non_critical: bool) -> tuple[tuple[str, ...], int] | None:
    """(field path, field number) of the first refused unknown field; runs on every tx, so it builds no
    text unless it finds one."""
    for field in UnknownFieldSet(msg):
        if not (allow_non_critical and field.field_number & NON_CRITICAL_BIT):
            return (), field.field_number
    for name, repeated in _message_fields(msg.DESCRIPTOR):
        if repeated:
            inners = getattr(msg, name)
        elif msg.HasField(name):
            inners = (getattr(msg, name),)
        else:
            continue
        for inner in inners:
            found = _first_unknown(inner, allow_non_critical)
            if found is not None:
                return (name, *found[0]), found[1]
    return None


@cache
def _message_fields(descriptor: Descriptor) -> tuple[tuple[str, bool], ...]:
    """The fields of a message type that hold messages, with whether they repeat (maps hold none here)."""
    return tuple(
        (field.name, field.label == FieldDescriptor.LABEL_REPEATED)
        for field in descriptor.fields
        if field.type == FieldDescriptor.TYPE_MESSAGE and not field.message_type.GetOptions().map_entry
    )
