"""A REST call's request message: path values, query parameters and the JSON body, as grpc-gateway fills them.

Path values and query parameters name (nested) fields by their .proto or JSON names (``pagination.limit``,
``pagination.key`` in base64, a repeated field by repeating the parameter); a parameter naming no field is
ignored, as the SDK's gateway ignores it, and one the request does not take (a malformed value, a message
field) is ``BadInput``. Values are converted through proto3 JSON, so they are checked as a JSON body is.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from sdk.rest.routes import Route

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
"""What Go's strconv.ParseBool, which grpc-gateway reads bool parameters with, takes."""
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
"""Standard or URL-safe base64, as grpc-gateway takes bytes (json_format alone skips stray characters)."""
_STRING_MESSAGES = frozenset(
    {
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
        "google.protobuf.FieldMask",
        "google.protobuf.StringValue",
        "google.protobuf.BytesValue",
        "google.protobuf.Int64Value",
        "google.protobuf.UInt64Value",
        "google.protobuf.Int32Value",
        "google.protobuf.UInt32Value",
        "google.protobuf.DoubleValue",
        "google.protobuf.FloatValue",
    }
)
"""Well-known message types whose proto3 JSON form is a string (or a number, which a string parses as)."""


class BadInput(Exception):
    """The call's path, parameters or body do not make a request: INVALID_ARGUMENT, HTTP 400."""


def _field(descriptor: Descriptor, name: str) -> FieldDescriptor | None:
    return descriptor.fields_by_name.get(name) or descriptor.fields_by_camelcase_name.get(name)


def _leaf(descriptor: Descriptor, path: str) -> tuple[list[str], FieldDescriptor] | None:
    """The proto names along ``path`` and its last field; None if some part names no field."""
    names = []
    field = None
    for part in path.split("."):
        if field is not None:
            if field.type != FieldDescriptor.TYPE_MESSAGE or field.label == FieldDescriptor.LABEL_REPEATED:
                raise BadInput(f"{'.'.join(names)} is not a message, so it has no field {part!r}")
            descriptor = field.message_type
        field = _field(descriptor, part)
        if field is None:
            return None
        names.append(field.name)
    assert field is not None
    return names, field


def _value(field: FieldDescriptor, text: str, where: str) -> Any:
    """``text`` as proto3 JSON has the field's value (json_format checks it further)."""
    if field.type == FieldDescriptor.TYPE_BOOL:
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise BadInput(f"{where}: {text!r} is not a bool")
    if field.type == FieldDescriptor.TYPE_BYTES and not _BASE64.fullmatch(text):
        raise BadInput(f"{where}: {text!r} is not base64")
    if field.type == FieldDescriptor.TYPE_ENUM:
        return int(text) if text.lstrip("-").isdigit() else text
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name not in _STRING_MESSAGES or field.message_type.GetOptions().map_entry:
            raise BadInput(f"{where}: a message field cannot be set from a parameter")
    return text


def _put(document: dict[str, Any], names: list[str], value: Any, repeated: bool) -> None:
    for name in names[:-1]:
        inner = document.setdefault(name, {})
        if not isinstance(inner, dict):
            raise BadInput(f"{'.'.join(names)} is set both as a value and as a message")
        document = inner
    if repeated:
        document.setdefault(names[-1], []).append(value)
    else:
        document[names[-1]] = value


def build_request(route: Route, path_values: dict[str, str], query: bytes, body: bytes) -> Message:
    """The request ``route``'s handler gets; ``BadInput`` if the call does not make one."""
    descriptor = route.request_type.DESCRIPTOR
    document: dict[str, Any] = {}
    if route.body:
        document = _body(route.body, body)
    bound = set(path_values)
    for path, text in path_values.items():
        found = _leaf(descriptor, path)
        if found is None or found[1].label == FieldDescriptor.LABEL_REPEATED:
            raise BadInput(f"path variable {path} names no field of {descriptor.full_name}")
        _put(document, found[0], _value(found[1], text, path), repeated=False)
    if route.body != "*":
        try:
            parameters = parse_qsl(query.decode(), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            raise BadInput("the query string is not UTF-8") from None
        for path, text in parameters:
            found = _leaf(descriptor, path)
            if found is None or path in bound or ".".join(found[0]) == route.body:
                continue
            names, field = found
            _put(document, names, _value(field, text, path), field.label == FieldDescriptor.LABEL_REPEATED)
    request = route.request_type()
    try:
        json_format.ParseDict(document, request)
    except (json_format.ParseError, RecursionError) as err:
        raise BadInput(str(err) or "the request nests too deep") from None
    return request


def _body(field: str, body: bytes) -> dict[str, Any]:
    """The JSON body as the part of the request document it fills (``field``: "*" for all of it)."""
    try:
        parsed = json.loads(body) if body.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise BadInput(f"the body is not JSON: {err}") from None
    if field == "*":
        if not isinstance(parsed, dict):
            raise BadInput("the body must be a JSON object")
        return parsed
    document: dict[str, Any] = {}
    _put(document, field.split("."), parsed, repeated=False)
    return document
