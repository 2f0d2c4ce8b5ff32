"""The refusals only the Transfer Agent makes (a full queue, no node for a model), in OpenAI's error body
(``sdk.http.errors.ApiError``, which the host's executor proxy answers in too)."""

from __future__ import annotations

from sdk.http.errors import ApiError


def rate_limited(message: str, retry_after_s: int) -> ApiError:
    return ApiError(429, message, "requests", "rate_limit_exceeded", headers={"retry-after": str(retry_after_s)})


def unavailable(message: str, code: str = "no_capable_node") -> ApiError:
    return ApiError(503, message, "server_error", code)
