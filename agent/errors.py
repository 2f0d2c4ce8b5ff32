"""OpenAI's error body, ``{"error": {"message", "type", "param", "code"}}``, for every refusal the TA makes."""

from __future__ import annotations

import json


class AgentError(Exception):
    def __init__(self, status: int, message: str, type: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self) -> bytes:
        return json.dumps({"error": {"message": self.message, "type": self.type, "param": self.param,
                                     "code": self.code}}).encode()


def unauthorized(message: str, code: str) -> AgentError:
    return AgentError(401, message, "authentication_error", code)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> AgentError:
    return AgentError(400, message, "invalid_request_error", code, param)


def rate_limited(message: str, retry_after_s: int) -> AgentError:
    return AgentError(429, message, "requests", "rate_limit_exceeded", headers={"retry-after": str(retry_after_s)})


def unavailable(message: str, code: str = "no_capable_node") -> AgentError:
    return AgentError(503, message, "server_error", code)


def stream_failure_event() -> bytes:
    """What ends a stream whose ML node failed after the first event: an error event, then ``[DONE]``."""
    failure = AgentError(502, "The ML node failed during the answer.", "server_error", "upstream_failed")
    return b"data: " + failure.body() + b"\n\ndata: [DONE]\n\n"
