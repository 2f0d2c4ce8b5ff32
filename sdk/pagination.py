"""Cosmos-style pagination over a prefix of the store: by key (next_key) or by offset, with a limit."""

from __future__ import annotations

from collections.abc import Iterator

from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2

from sdk.context import PrefixStore
from sdk.errors import ErrInvalidRequest

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def paginate(
    store: PrefixStore, prefix: bytes, page: pagination_pb2.PageRequest
) -> tuple[list[tuple[bytes, bytes]], pagination_pb2.PageResponse]:
    """Entries under ``prefix`` (keys relative to it) for one page, and the page response."""
    if page.key and page.offset:
        raise ErrInvalidRequest.wrap("pagination takes either a key or an offset, not both")
    limit = page.limit or DEFAULT_LIMIT
    if limit > MAX_LIMIT:
        raise ErrInvalidRequest.wrap(f"pagination limit {limit} exceeds {MAX_LIMIT}")
    entries: Iterator[tuple[bytes, bytes]]
    if page.key and page.reverse:  # backwards from the key, the key included
        entries = store.iterate(prefix, end=prefix + page.key + b"\x00", reverse=True)
    else:
        entries = store.iterate(prefix, start=prefix + page.key if page.key else None, reverse=page.reverse)
    count_total = page.count_total and not page.key  # as in the Cosmos SDK: ignored when paging by key
    items: list[tuple[bytes, bytes]] = []
    skipped = total = 0
    next_key = b""
    for key, value in entries:
        if skipped < page.offset:
            skipped += 1
            total += 1
            continue
        if len(items) == limit:
            next_key = next_key or key[len(prefix) :]
            if not count_total:
                break
        else:
            items.append((key[len(prefix) :], value))
        total += 1
    return items, pagination_pb2.PageResponse(next_key=next_key, total=total if count_total else 0)
