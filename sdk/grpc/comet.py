"""CometBFT RPC calls a gRPC handler makes on a client's behalf: awaited in a thread, and paged as the SDK pages.

Calls run in a thread because CometBFT may answer only after asking this same loop (CheckTx, Query).
"""

from __future__ import annotations

import asyncio
from typing import Any

from sdk.client.rpc import CometRPC, RPCError, RPCUnreachable
from sdk.errors import ErrInvalidRequest
from sdk.pagination import DEFAULT_LIMIT

MAX_PER_PAGE = 100
"""CometBFT's cap on ``per_page``; it silently answers fewer when asked for more."""


async def call_with_client_input(rpc: CometRPC, method: str, what: str, **params: Any) -> dict[str, Any]:
    """A call whose parameters the client chose (a search query, a page): CometBFT refuses it only for them
    (unparsable query, page past the end), so its refusal is the client's INVALID_ARGUMENT, named by
    ``what``; a node that cannot be reached stays UNAVAILABLE."""
    try:
        return await asyncio.to_thread(rpc.call, method, **params)
    except RPCUnreachable:
        raise
    except RPCError as err:
        raise ErrInvalidRequest.wrap(f"{what}: CometBFT refused it ({err})") from None


def per_page(limit: int) -> int:
    """CometBFT's ``per_page`` for an SDK limit: 0 is the SDK's default, and more than CometBFT serves is
    capped here, so that a page number computed from it means what CometBFT will answer."""
    return min(limit or DEFAULT_LIMIT, MAX_PER_PAGE)


def comet_page(offset: int, limit: int) -> tuple[int, int]:
    """CometBFT's 1-based ``page`` and ``per_page`` for an SDK offset and limit, as the SDK converts them
    (``page = offset / limit + 1``)."""
    size = per_page(limit)
    return offset // size + 1, size
