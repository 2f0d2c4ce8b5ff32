"""What a chat request commits to (the inference's terms), parsed once and the same way at every hop (the TA and
the host's executor proxy).

A start on chain escrows ``max_tokens × fee_per_token`` for a model, a seed and a hash of the sampling parameters
(``params_hash``); the host is paid for at most ``max_tokens``. So every hop must read the same request: a field
one hop reads as true and another as absent (``"stream": "yes"``) or a seed one hop takes and the chain cannot
hold (``-1``, ``2**64``) would make the hops disagree about what was asked and what is paid. ``parse_terms``
refuses, with a 400, whatever is not of the type OpenAI's API documents; it never coerces.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sdk.client.signing import canonical_json
from sdk.http.errors import bad_request

SAMPLING_KEYS = ("temperature", "top_p", "stop", "logprobs", "top_logprobs", "n", "stream", "response_format")
"""The body fields whose values ``params_hash`` covers (as sent), with model, max_tokens and seed."""
U64 = 1 << 64


@dataclass(frozen=True)
class ChatTerms:
    """The parts of a chat request the chain's start binds, and how it is to be answered."""

    model: str
    max_tokens: int | None
    """As asked (``max_completion_tokens``, else ``max_tokens``); None: the TA's default."""
    max_tokens_param: str
    fee_per_token: int | None
    stream: bool
    include_usage: bool
    seed: int | None
    sampling: tuple[tuple[str, Any], ...]
    """``SAMPLING_KEYS`` with their values as sent (None when absent)."""

    def params_hash(self, max_tokens: int, seed: int) -> bytes:
        """sha256 of the canonical JSON of the sampling values, model, max_tokens and seed: the start's
        ``params_hash`` (agent/README.md)."""
        params = dict(self.sampling)
        params.update(model=self.model, max_tokens=max_tokens, seed=seed)
        return hashlib.sha256(canonical_json(params)).digest()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(request: dict[str, Any], key: str) -> int | None:
    value = request.get(key)
    if value is not None and (not _is_int(value) or value < 1):
        raise bad_request(f"Invalid value for '{key}': expected a positive integer.", key)
    return value


def _boolean(document: dict[str, Any], key: str, param: str) -> bool:
    value = document.get(key)
    if value is not None and not isinstance(value, bool):
        raise bad_request(f"Invalid value for '{param}': expected a boolean, got {json.dumps(value)[:40]}.", param)
    return bool(value)


def parse_request(body: bytes) -> dict[str, Any]:
    """The body as a JSON object; 400 otherwise."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise bad_request("We could not parse the JSON body of your request. The body must be valid JSON.") from None
    if not isinstance(request, dict):
        raise bad_request("The request body must be a JSON object.")
    return request


def parse_terms(request: dict[str, Any]) -> ChatTerms:
    """The terms of a parsed request; ``ApiError`` (400) for any field of the wrong type or out of range."""
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("Missing required parameter: 'model'.", "model")
    max_tokens, param = _positive(request, "max_completion_tokens"), "max_completion_tokens"
    if max_tokens is None:
        max_tokens, param = _positive(request, "max_tokens"), "max_tokens"
    fee = _positive(request, "fee_per_token")
    seed = request.get("seed")
    if seed is not None and (not _is_int(seed) or not 0 <= seed < U64):
        raise bad_request("Invalid value for 'seed': expected an integer from 0 to 2^64 - 1.", "seed")
    n = request.get("n")
    if n is not None and (not _is_int(n) or n != 1):
        raise bad_request("Invalid value for 'n': only one choice (n = 1) is served and paid for.", "n")
    stream = _boolean(request, "stream", "stream")
    options = request.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise bad_request("Invalid value for 'stream_options': expected an object.", "stream_options")
    include_usage = _boolean(options or {}, "include_usage", "stream_options.include_usage")
    _boolean(request, "logprobs", "logprobs")
    sampling = tuple((key, request.get(key)) for key in SAMPLING_KEYS)
    return ChatTerms(model, max_tokens, param, fee, stream, include_usage, seed, sampling)
