"""What the REST API answers: proto3 JSON as the Cosmos SDK's gateway prints it, and its error body.

The SDK prints with the .proto field names, every field even at its default, 64-bit integers as strings,
enums by name, bytes in base64 and an ``Any`` with its ``@type`` (resolved in the default descriptor pool,
where every message the node knows is registered). A failure is google.rpc.Status as JSON,
``{"code", "message", "details"}``, under the HTTP status grpc-gateway gives its gRPC code.
"""

from __future__ import annotations

import json

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

_HTTP_STATUS = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 408,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}
"""grpc-gateway's HTTPStatusFromCode (v1, the SDK's)."""


def http_status(code: grpc.StatusCode) -> int:
    return _HTTP_STATUS[code]


def message_json(message: Message) -> bytes:
    document = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return json.dumps(document, separators=(",", ":")).encode()


def error_json(code: grpc.StatusCode, message: str) -> bytes:
    return json.dumps({"code": code.value[0], "message": message, "details": []}).encode()
