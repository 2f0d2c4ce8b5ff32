"""OpenAI's error body, ``{"error": {"message", "type", "param", "code"}}``: the one shape every refusal takes,
whether the Transfer Agent or a host's executor proxy makes it, so a client reads both the same way."""

from __future__ import annotations

import json


class ApiError(Exception):
    """A refusal: the HTTP ``status``, OpenAI's error fields and any ``headers`` to send with it."""

    def __init__(
        self,
        status: int,
        message: str,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self) -> bytes:
        return json.dumps(
            {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}
        ).encode()


def unauthorized(message: str, code: str) -> ApiError:
    return ApiError(401, message, "authentication_error", code)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, "invalid_request_error", code, param)


def stream_failure_event() -> bytes:
    """What ends a stream whose ML node failed after the first event: an error event, then ``[DONE]``."""
    failure = ApiError(502, "The ML node failed during the answer.", "server_error", "upstream_failed")
    return b"data: " + failure.body() + b"\n\ndata: [DONE]\n\n"
