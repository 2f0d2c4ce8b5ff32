"""What the host's ML node is asked for a forwarded request: its body, held to the terms its start escrowed, with
the logprobs PoC V2 re-executes against."""

from __future__ import annotations

import json
from typing import Any

from host.config import Escrowed
from sdk.http.errors import ApiError
from x.inference.client import ChatTerms

TOP_LOGPROBS = 5
"""The top alternatives per token the host asks its node for, whatever the client asked: the most an ML node
serves (mlnode's ``MAX_TOP_LOGPROBS``), so a validator's re-execution compares the widest lists
(mlnode/VERIFY.md). The client gets what it asked for (``host/shown.py``); the host keeps the rest."""


def terms_mismatch(message: str) -> ApiError:
    """A body whose terms are not those its start escrowed: the host would not be paid for what it asks."""
    return ApiError(
        402, f"This host will not be paid for the request: {message}", "invalid_request_error", "terms_mismatch"
    )


def asked_top_logprobs(request: dict[str, Any]) -> int | None:
    """The top alternatives per token the client asked for (0: the tokens' logprobs alone); None when it asked
    for no logprobs."""
    if request.get("logprobs") is not True:
        return None
    top = request.get("top_logprobs")
    return top if isinstance(top, int) and not isinstance(top, bool) and top >= 0 else 0


def node_body(request: dict[str, Any], terms: ChatTerms, escrowed: Escrowed, body: bytes) -> bytes:
    """What the node is asked for a request whose start escrowed ``escrowed``: the forwarded body, with
    ``max_tokens`` set when the body left it to the TA's default, usage asked for in a stream that did not ask
    (the finish needs it), and logprobs with ``TOP_LOGPROBS`` alternatives, or more when the client asked for
    more (PoC V2 re-executes against them; ``host/shown.py`` gives the client only what it asked); 402
    ``terms_mismatch`` unless the body's model, max_tokens, seed and sampling parameters are those the start
    escrowed (its ``params_hash``), so the host answers only what it is paid for."""
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
    top = max(TOP_LOGPROBS, asked_top_logprobs(request) or 0)
    if request.get("logprobs") is not True or request.get("top_logprobs") != top:
        changes.update(logprobs=True, top_logprobs=top)
    if not changes:
        return body
    return json.dumps({**request, **changes}, separators=(",", ":"), ensure_ascii=False).encode()
