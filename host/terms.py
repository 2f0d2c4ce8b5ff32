"""What the host's ML node is asked for a forwarded request: its body, held to the terms its start escrowed."""

from __future__ import annotations

import json
from typing import Any

from host.config import Escrowed
from sdk.http.errors import ApiError
from x.inference.client import ChatTerms


def terms_mismatch(message: str) -> ApiError:
    """A body whose terms are not those its start escrowed: the host would not be paid for what it asks."""
    return ApiError(
        402, f"This host will not be paid for the request: {message}", "invalid_request_error", "terms_mismatch"
    )


def node_body(request: dict[str, Any], terms: ChatTerms, escrowed: Escrowed, body: bytes) -> bytes:
    """What the node is asked for a request whose start escrowed ``escrowed``: the forwarded body, with
    ``max_tokens`` set when the body left it to the TA's default and usage asked for in a stream that did not ask
    (the finish needs it; ``_event`` takes it out again); 402 ``terms_mismatch`` unless the body's model,
    max_tokens, seed and sampling parameters are those the start escrowed (its ``params_hash``), so the host
    answers only what it is paid for."""
    if terms.model != escrowed.model:
        raise terms_mismatch(f"the body asks for {terms.model!r}, its start is for {escrowed.model!r}")
    if terms.max_tokens not in (None, escrowed.max_tokens):
        raise terms_mismatch(f"the body asks for {terms.max_tokens} tokens, its start escrowed {escrowed.max_tokens}")
    if terms.seed != escrowed.seed:
        raise terms_mismatch(f"the body's seed {terms.seed} is not its start's {escrowed.seed}")
    if terms.params_hash(escrowed.max_tokens, escrowed.seed) != escrowed.params_hash:
        raise terms_mismatch("the body's sampling parameters are not those its start escrowed (params_hash)")
    changes: dict[str, Any] = {}
    if terms.max_tokens is None:
        changes["max_tokens"] = escrowed.max_tokens
    if terms.stream and not terms.include_usage:
        changes["stream_options"] = {**(request.get("stream_options") or {}), "include_usage": True}
    if not changes:
        return body
    return json.dumps({**request, **changes}, separators=(",", ":"), ensure_ascii=False).encode()
