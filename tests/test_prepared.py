"""The prepared-tx cache between CheckTx and the block: bounded by bytes, failures never kept."""

from __future__ import annotations

import pytest

from sdk.errors import ABCIError, ErrTxDecode
from sdk.prepared import PreparedCache, PreparedTx


def test_prepared_cache_is_bounded_and_keeps_no_failure() -> None:
    """CheckTx's decoding is reused by the block; the cache holds at most its budget of tx bytes."""
    calls: list[bytes] = []

    def prepare(raw: bytes) -> PreparedTx:
        calls.append(raw)
        if raw.startswith(b"bad"):
            raise ErrTxDecode.wrap("bad")
        return PreparedTx(tx=None, messages=[], signers=[raw])  # type: ignore[arg-type]

    cache = PreparedCache(prepare, budget_bytes=10)
    assert cache.get(b"aaaa") is cache.get(b"aaaa") and calls == [b"aaaa"]
    with pytest.raises(ABCIError):
        cache.get(b"bad")
    with pytest.raises(ABCIError):
        cache.get(b"bad")
    assert calls.count(b"bad") == 2
    cache.get(b"bbbb")
    cache.get(b"cccc")  # 12 bytes held > 10: the oldest goes
    cache.get(b"aaaa")
    assert calls.count(b"aaaa") == 2 and calls.count(b"cccc") == 1
    cache.get(b"x" * 11)  # larger than the whole budget: served, never kept
    cache.get(b"x" * 11)
    assert calls.count(b"x" * 11) == 2
