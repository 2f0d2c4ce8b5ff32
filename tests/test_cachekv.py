"""CacheKV branch/write semantics and merged iteration, checked against dict models."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdk.store import CacheKV, CommitStore

KEYS = [b"a", b"aa", b"ab", b"b", b"ba", b"c", b"\x00", b"\xff", b"\xff\x00", b"\xff\xff", b"m1", b"m2", b"m3"]
keys_st = st.sampled_from(KEYS)
values_st = st.binary(min_size=1, max_size=3)
range_st = st.tuples(
    st.sampled_from([b"", b"a", b"b", b"\xff", b"m"]), st.none() | keys_st, st.none() | keys_st, st.booleans()
)


class DictStore:
    """Minimal sorted parent store."""

    def __init__(self, data: dict[bytes, bytes]) -> None:
        self.data = data

    def get(self, key: bytes) -> bytes | None:
        return self.data.get(key)

    def iterate(self, prefix=b"", start=None, end=None, reverse=False) -> Iterator[tuple[bytes, bytes]]:
        return iter(expected(self.data, prefix, start, end, reverse))


def expected(model: dict[bytes, bytes], prefix: bytes, start, end, reverse: bool) -> list[tuple[bytes, bytes]]:
    ks = sorted(k for k in model if k.startswith(prefix) and (start is None or k >= start) and (end is None or k < end))
    if reverse:
        ks.reverse()
    return [(k, model[k]) for k in ks]


op_st = st.one_of(
    st.tuples(st.just("set"), keys_st, values_st),
    st.tuples(st.just("delete"), keys_st),
    st.tuples(st.just("branch")),
    st.tuples(st.just("write")),
    st.tuples(st.just("drop")),
    st.tuples(st.just("iterate"), range_st),
)


@settings(max_examples=300, deadline=None)
@given(base=st.dictionaries(keys_st, values_st), ops=st.lists(op_st, max_size=40))
def test_branch_stack_matches_model(base: dict[bytes, bytes], ops: list[tuple]) -> None:
    stack = [CacheKV(DictStore(dict(base)))]
    models = [dict(base)]
    for op in ops:
        top, model = stack[-1], models[-1]
        if op[0] == "set":
            top.set(op[1], op[2])
            model[op[1]] = op[2]
        elif op[0] == "delete":
            top.delete(op[1])
            model.pop(op[1], None)
        elif op[0] == "branch":
            stack.append(top.branch())
            models.append(dict(model))
        elif op[0] == "write" and len(stack) > 1:
            top.write()
            models[-2] = dict(model)
            assert top.changes() == {}
        elif op[0] == "drop" and len(stack) > 1:
            stack.pop()
            models.pop()
        elif op[0] == "iterate":
            assert list(top.iterate(*op[1])) == expected(model, *op[1])
        for k in KEYS:
            assert stack[-1].get(k) == models[-1].get(k)
    for kv, model in zip(stack, models):
        assert list(kv.iterate()) == expected(model, b"", None, None, False)
        assert list(kv.iterate(reverse=True)) == expected(model, b"", None, None, True)
    # the root branch's changes turn the base into its model
    final = dict(base)
    for k, v in stack[0].changes().items():
        if v is None:
            final.pop(k, None)
        else:
            final[k] = v
    assert final == models[0]


@settings(max_examples=80, deadline=None)
@given(
    base=st.dictionaries(keys_st, values_st),
    writes=st.dictionaries(keys_st, st.none() | values_st),
    rng=range_st,
)
def test_over_commit_store(base: dict[bytes, bytes], writes: dict[bytes, bytes | None], rng) -> None:
    with tempfile.TemporaryDirectory() as d:
        store = CommitStore(os.path.join(d, "db"))
        store.apply(base)
        store.commit()
        block = CacheKV(store)
        tx = block.branch()
        model = dict(base)
        for k, v in writes.items():
            if v is None:
                tx.delete(k)
                model.pop(k, None)
            else:
                tx.set(k, v)
                model[k] = v
        assert list(tx.iterate(*rng)) == expected(model, *rng)
        assert list(block.iterate(*rng)) == expected(base, *rng)
        tx.write()
        assert list(block.iterate(*rng)) == expected(model, *rng)
        with pytest.raises(TypeError):
            block.write()
        store.apply(block.changes())
        store.commit()
        assert list(store.iterate(*rng)) == expected(model, *rng)
        store.close()


def test_iteration_snapshot_and_laziness() -> None:
    parent = CacheKV(DictStore({b"a": b"1", b"c": b"3"}))
    parent.set(b"b", b"2")
    it = parent.iterate()
    parent.set(b"bb", b"x")  # written after the iterator was made: not seen
    parent.delete(b"a")
    assert list(it) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    assert list(parent.iterate()) == [(b"b", b"2"), (b"bb", b"x"), (b"c", b"3")]


def test_validation() -> None:
    kv = CacheKV(DictStore({}))
    with pytest.raises(ValueError):
        kv.set(b"", b"v")
    with pytest.raises(ValueError):
        kv.delete(b"")
    with pytest.raises(ValueError):
        kv.set(b"k", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        kv.set(b"k", b"")
    assert kv.get(b"k") is None
