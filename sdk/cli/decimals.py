"""Cosmos ``LegacyDec`` values in printed replies, as the SDK's CLI prints them.

A field the SDK declares ``(gogoproto.customtype) = "…LegacyDec"`` (a ``DecCoin``'s amount, the community pool,
slashing fractions in ``cosmos.slashing.v1beta1.Params``) carries ``value × 10^18`` as ASCII digits on the wire,
in a ``string`` or ``bytes`` field; proto3 JSON would print those digits (or their base64). The SDK prints the
value with its 18 decimal places: ``32300000000000.000000000000000000``, ``0.500000000000000000``. Fields that hold
decimal text already (``cosmos.gov.v1.Params``' quorum: only ``cosmos_proto.scalar``, no customtype) are printed
as they are, as the SDK does. Only printing changes: the messages and their bytes stay as the node sent them.
"""

from __future__ import annotations

from typing import Any

from cosmpy.protos.gogoproto import gogo_pb2
from google.protobuf import symbol_database
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from sdk.dec import legacy_dec_wire_text

LEGACY_DEC_TYPES = frozenset({"cosmossdk.io/math.LegacyDec", "github.com/cosmos/cosmos-sdk/types.Dec"})
"""The gogoproto custom types whose wire form is the integer ``value × 10^18``: LegacyDec and its old name."""

ANY = "google.protobuf.Any"


def is_legacy_dec(field: FieldDescriptor) -> bool:
    options = field.GetOptions()
    return options.HasExtension(gogo_pb2.customtype) and options.Extensions[gogo_pb2.customtype] in LEGACY_DEC_TYPES


def with_dec_text(message: Message, shown: dict[str, Any]) -> dict[str, Any]:
    """``shown`` (``message`` as proto3 JSON with proto field names) with every LegacyDec field, at any depth and
    inside ``Any``, replaced by the SDK's text of the value. Changes ``shown`` in place and returns it."""
    for field, value in message.ListFields():
        if field.name not in shown:
            continue
        repeated = field.label == FieldDescriptor.LABEL_REPEATED
        if field.message_type is None:
            if is_legacy_dec(field):
                shown[field.name] = [_text(v) for v in value] if repeated else _text(value)
        elif field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for key, item in value.items():
                    _message(item, shown[field.name][_map_key(key)])
        elif repeated:
            for item, item_shown in zip(value, shown[field.name]):
                _message(item, item_shown)
        else:
            _message(value, shown[field.name])
    return shown


def _message(message: Message, shown: Any) -> None:
    if not isinstance(shown, dict):
        return
    if message.DESCRIPTOR.full_name == ANY:
        packed = symbol_database.Default().GetSymbol(message.type_url.rpartition("/")[2])()
        message.Unpack(packed)
        message = packed
    with_dec_text(message, shown)


def _text(value: str | bytes) -> str:
    return legacy_dec_wire_text(value.decode("ascii", "replace") if isinstance(value, bytes) else value)


def _map_key(key: object) -> str:
    """A map key as proto3 JSON writes it."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)
