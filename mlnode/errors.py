"""Failures as OpenAI reports them: an HTTP status plus ``{"error": {message, type, param, code}}``.

Backends raise ``APIError`` wherever a request fails; the server renders it, so a client sees the same
body whichever backend or layer refused it.
"""

from __future__ import annotations

from starlette.responses import JSONResponse

from mlnode.schemas import ErrorDetail, ErrorResponse

RETRY_AFTER_S = 1


class APIError(Exception):
    def __init__(self, status: int, detail: ErrorDetail, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail.message)
        self.status = status
        self.detail = detail
        self.headers = headers or {}

    @property
    def body(self) -> ErrorResponse:
        return ErrorResponse(error=self.detail)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body.model_dump(), status_code=self.status, headers=self.headers)


def invalid_request(message: str, param: str | None = None, code: str | None = None, status: int = 400) -> APIError:
    return APIError(status, ErrorDetail(message=message, type="invalid_request_error", param=param, code=code))


def model_not_found(model: str) -> APIError:
    return invalid_request(
        f"The model `{model}` does not exist or is not served by this node.", "model", "model_not_found", status=404
    )


def context_length_exceeded(context: int, prompt_tokens: int, completion_tokens: int) -> APIError:
    return invalid_request(
        f"This model's maximum context length is {context} tokens. However, you requested "
        f"{prompt_tokens + completion_tokens} tokens ({prompt_tokens} in the messages, {completion_tokens} in "
        "the completion). Please reduce the length of the messages or completion.",
        "messages",
        "context_length_exceeded",
    )


def request_too_large(limit: int) -> APIError:
    return invalid_request(
        f"The request body is larger than this node's limit of {limit} bytes.", code="request_too_large", status=413
    )


def over_capacity() -> APIError:
    return APIError(
        429,
        ErrorDetail(
            message="This node is at capacity: every batch slot and queue place is taken. Retry shortly.",
            type="requests",
            code="rate_limit_exceeded",
        ),
        {"Retry-After": str(RETRY_AFTER_S)},
    )


def server_error(message: str, status: int = 500) -> APIError:
    return APIError(status, ErrorDetail(message=message, type="server_error"))
