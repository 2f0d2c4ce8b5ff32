"""State-sync snapshots (sdk/snapshots): taken after commits off the event loop, served and restored through a
real app's ABCI methods, refused when anything disagrees, and the ``gonkad snapshots`` commands."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from chain import BlockOptions, InProcessChain
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.timestamp_pb2 import Timestamp

from app import GonkaApp
from gonkad.paths import app_db, snapshot_dir
from sdk.context import Context
from sdk.snapshots.format import FORMAT, Metadata, chunk_hash, chunk_items, encode_item
from sdk.snapshots.manager import SnapshotManager
from sdk.snapshots.restore import Applied, Offered, Restore
from sdk.snapshots.store import SnapshotInfo, SnapshotStore
from sdk.store.commitstore import CommitStore

OFFER = abci.ResponseOfferSnapshot
APPLY = abci.ResponseApplySnapshotChunk
VALUE = b"v" * 1000  # a few thousand of these make a state of several 1 MiB chunks


def writes(height: int) -> dict[bytes, bytes | None]:
    """A block's extra state: 1,000 new keys, 100 keys of the last block rewritten and 50 deleted."""
    changes: dict[bytes, bytes | None] = {b"test/%03d/%04d" % (height, i): VALUE + b"%d" % i for i in range(1000)}
    if height > 2:
        changes.update({b"test/%03d/%04d" % (height - 1, i): b"new%d" % height for i in range(100)})
        changes.update({b"test/%03d/%04d" % (height - 1, i): None for i in range(100, 150)})
    return changes


def write_block(height: int) -> BlockOptions:
    def during(ctx: Context) -> None:
        for key, value in writes(height).items():
            if value is None:
                ctx.store.delete(key)
            else:
                ctx.store.set(key, value)

    return {"during": during, "time_ns": height * 10**9}


def source_chain(path: Path, snapshots: SnapshotManager, heights: int) -> InProcessChain:
    """A GonkaApp chain with thousands of extra keys written, rewritten and deleted over ``heights`` blocks."""
    chain = InProcessChain(path / "src", {}, snapshots=snapshots)
    while chain.height < heights:
        chain.block(**write_block(chain.height + 1))
    snapshots.wait()
    return chain


def offer(app: GonkaApp, info: abci.Snapshot, app_hash: bytes) -> int:
    return app.offer_snapshot(abci.RequestOfferSnapshot(snapshot=info, app_hash=app_hash)).result


def apply(app: GonkaApp, index: int, chunk: bytes, sender: str = "") -> abci.ResponseApplySnapshotChunk:
    return app.apply_snapshot_chunk(abci.RequestApplySnapshotChunk(index=index, chunk=chunk, sender=sender))


def empty_app(path: Path) -> GonkaApp:
    return GonkaApp(CommitStore(str(path)))


def next_block(app: GonkaApp, height: int) -> bytes:
    """An empty block at ``height``, committed; its app hash."""
    response = app.finalize_block(abci.RequestFinalizeBlock(height=height, time=Timestamp(seconds=height)))
    app.commit(abci.RequestCommit())
    return response.app_hash


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessChain]:
    """Six blocks with snapshots at 3 and 6, the last height."""
    path = tmp_path_factory.mktemp("source")
    chain = source_chain(path, SnapshotManager(SnapshotStore(path / "snapshots"), 3, 2), 6)
    yield chain
    chain.close()


def test_a_snapshot_restores_through_abci_into_an_empty_app(source: InProcessChain, tmp_path: Path) -> None:
    """Restored, the app is the source's at height 6, and goes on as it does (this adds block 7 to the source;
    the other tests read heights 3 and 6 only)."""
    listed = source.app.list_snapshots(abci.RequestListSnapshots()).snapshots
    assert [(s.height, s.format) for s in listed] == [(6, FORMAT), (3, FORMAT)]
    newest = listed[0]
    assert newest.chunks >= 3 and newest.hash == hashlib.sha256(newest.metadata).digest()
    app = empty_app(tmp_path / "dst")
    assert offer(app, newest, source.app.store.root_at(6)) == OFFER.ACCEPT
    for index in range(newest.chunks):
        chunk = source.app.load_snapshot_chunk(abci.RequestLoadSnapshotChunk(height=6, format=FORMAT, chunk=index))
        assert apply(app, index, chunk.chunk, "peer").result == APPLY.ACCEPT
    info = app.info(abci.RequestInfo())
    assert (info.last_block_height, info.last_block_app_hash) == (6, source.app.store.root_at(6))
    assert app.store.items_at(6) == source.app.store.items_at(6)
    assert app.store.get(b"test/006/0999") == VALUE + b"999" and app.store.get(b"test/005/0120") is None
    assert app.chain_id == source.chain_id
    # The restored node goes on as the source does: the same next block gives the same app hash.
    assert next_block(app, 7) == next_block(source.app, 7) != source.app.store.root_at(6)
    app.store.close()


def test_an_unknown_chunk_loads_empty(source: InProcessChain) -> None:
    for height, format, chunk in ((6, FORMAT, 99), (5, FORMAT, 0), (6, 2, 0)):
        request = abci.RequestLoadSnapshotChunk(height=height, format=format, chunk=chunk)
        assert source.app.load_snapshot_chunk(request).chunk == b""


def snapshot_of(store: SnapshotStore, height: int) -> tuple[abci.Snapshot, list[bytes]]:
    info = store.get(height)
    assert info is not None
    chunks = [store.load_chunk(height, FORMAT, i) for i in range(info.chunks)]
    return abci.Snapshot(
        height=height, format=FORMAT, chunks=info.chunks, hash=info.hash, metadata=info.metadata
    ), chunks


def test_a_tampered_chunk_is_refetched_from_another_sender(source: InProcessChain, tmp_path: Path) -> None:
    assert source.app.snapshots is not None
    snapshot, chunks = snapshot_of(source.app.snapshots.snapshots, 3)
    app = empty_app(tmp_path / "dst")
    assert offer(app, snapshot, source.app.store.root_at(3)) == OFFER.ACCEPT
    assert apply(app, 0, chunks[0]).result == APPLY.ACCEPT
    tampered = chunks[1][:-1] + bytes([chunks[1][-1] ^ 1])
    retry = apply(app, 1, tampered, "badpeer")
    assert (retry.result, list(retry.refetch_chunks), list(retry.reject_senders)) == (APPLY.RETRY, [1], ["badpeer"])
    assert list(apply(app, 1, tampered).reject_senders) == []  # no sender: none to reject
    for index in range(1, len(chunks)):
        assert apply(app, index, chunks[index], "goodpeer").result == APPLY.ACCEPT
    assert (app.store.version, app.store.root_hash) == (3, source.app.store.root_at(3))
    app.store.close()


def test_offers_of_unknown_formats_bad_metadata_or_to_a_full_node_are_refused(
    source: InProcessChain, tmp_path: Path
) -> None:
    assert source.app.snapshots is not None
    snapshot, _ = snapshot_of(source.app.snapshots.snapshots, 6)
    root = source.app.store.root_at(6)
    app = empty_app(tmp_path / "dst")
    other_format = abci.Snapshot(**{**_fields(snapshot), "format": 2})
    assert offer(app, other_format, root) == OFFER.REJECT_FORMAT
    for change in ({"chunks": snapshot.chunks + 1}, {"hash": b"\x00" * 32}, {"metadata": snapshot.metadata[:-1]}):
        assert offer(app, abci.Snapshot(**{**_fields(snapshot), **change}), root) == OFFER.REJECT, change
    assert offer(app, snapshot, b"\x01" * 32) == OFFER.REJECT  # the metadata recorded another app hash
    assert apply(app, 0, b"").result == APPLY.ABORT  # nothing accepted
    assert offer(source.app, snapshot, root) == OFFER.ABORT  # state sync is for an empty node
    app.store.close()


def _fields(snapshot: abci.Snapshot) -> dict[str, object]:
    return {f: getattr(snapshot, f) for f in ("height", "format", "chunks", "hash", "metadata")}


def encode_chunk(items: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(encode_item(k, v) for k, v in items)


def forged(height: int, raw: list[bytes], items: int, app_hash: bytes) -> abci.Snapshot:
    """A snapshot whose metadata is self-consistent, naming whatever chunks, item count and app hash it is given."""
    metadata = Metadata(height, items, app_hash, tuple(map(chunk_hash, raw)))
    return abci.Snapshot(height=height, format=FORMAT, chunks=len(raw), hash=metadata.hash, metadata=metadata.encode())


def test_a_state_whose_root_is_not_the_app_hash_is_rejected_and_nothing_is_committed(
    source: InProcessChain, tmp_path: Path
) -> None:
    items = source.app.store.items_at(6)
    root = source.app.store.root_at(6)
    chunks = [encode_chunk(items[: len(items) // 2]), encode_chunk(items[len(items) // 2 : -1])]
    snapshot = forged(6, chunks, len(items) - 1, root)  # one item short, and counted as such
    app = empty_app(tmp_path / "dst")
    assert source.app.snapshots is not None
    good, good_chunks = snapshot_of(source.app.snapshots.snapshots, 6)
    assert offer(app, good, root) == OFFER.ACCEPT
    assert apply(app, 0, good_chunks[0]).result == APPLY.ACCEPT  # then abandoned: staged, nothing written
    assert app.store.version == 0 and list(app.store.iterate()) == []
    assert offer(app, snapshot, root) == OFFER.ACCEPT
    assert apply(app, 0, chunks[0]).result == APPLY.ACCEPT
    assert apply(app, 1, chunks[1]).result == APPLY.REJECT_SNAPSHOT
    assert app.store.version == 0 and list(app.store.iterate()) == []
    assert app.info(abci.RequestInfo()).last_block_height == 0
    # Nothing of either is left: the true snapshot, offered again, restores.
    assert offer(app, good, root) == OFFER.ACCEPT
    assert [apply(app, i, c).result for i, c in enumerate(good_chunks)] == [APPLY.ACCEPT] * len(good_chunks)
    assert (app.store.version, app.store.root_hash) == (6, root)
    app.store.close()


@pytest.mark.parametrize("case", ["across chunks", "within a chunk", "repeated key", "truncated", "empty chunk"])
def test_chunks_out_of_key_order_or_malformed_reject_the_snapshot(tmp_path: Path, case: str) -> None:
    """The middle chunk of three is refused as it comes, before the last one could fail the root check."""
    a, b, c, d = (b"a", b"1"), (b"b", b"2"), (b"c", b"3"), (b"d", b"4")
    middle = {
        "across chunks": encode_chunk([a]),
        "within a chunk": encode_chunk([c, b]),
        "repeated key": encode_chunk([b, c]),
        "truncated": encode_chunk([c])[:-1],
        "empty chunk": b"",
    }[case]
    raw = [encode_chunk([b]), middle, encode_chunk([d])]
    app = empty_app(tmp_path / "dst")
    assert offer(app, forged(4, raw, 4, b"\x07" * 32), b"\x07" * 32) == OFFER.ACCEPT
    assert apply(app, 0, raw[0]).result == APPLY.ACCEPT
    assert apply(app, 1, raw[1]).result == APPLY.REJECT_SNAPSHOT
    assert app.store.version == 0 and app.restoring is None
    assert apply(app, 2, raw[2]).result == APPLY.ABORT  # the snapshot is gone
    app.store.close()


def test_chunks_may_come_in_any_order(source: InProcessChain, tmp_path: Path) -> None:
    assert source.app.snapshots is not None
    snapshot, chunks = snapshot_of(source.app.snapshots.snapshots, 6)
    store = CommitStore(str(tmp_path / "dst"))
    offered, restore = Restore.offer(
        store, 6, FORMAT, snapshot.chunks, snapshot.hash, snapshot.metadata, snapshot_app_hash(snapshot)
    )
    assert offered is Offered.ACCEPT and restore is not None
    assert [restore.apply_chunk(i, chunks[i]) for i in reversed(range(len(chunks)))] == [Applied.ACCEPT] * len(chunks)
    assert store.root_hash == source.app.store.root_at(6)
    store.close()


def snapshot_app_hash(snapshot: abci.Snapshot) -> bytes:
    return Metadata.decode(snapshot.metadata).app_hash


def test_chunks_are_the_items_framed_in_order_whatever_their_batches(tmp_path: Path) -> None:
    """Format 1 by its rule, item by item (an item joins the chunk while the payload stays within the limit, an
    item larger than the limit makes a chunk alone), however the writer batches the items it reads."""
    items = [(b"k%05d" % i, b"v" * (1 + i * 37 % 300)) for i in range(2000)]
    items[700] = (items[700][0], b"x" * 5000)  # larger than the limit
    expected: list[list[bytes]] = [[]]
    for key, value in items:
        item = encode_item(key, value)
        if expected[-1] and sum(map(len, expected[-1])) + len(item) > 4096:
            expected.append([])
        expected[-1].append(item)
    want = [(b"".join(parts), len(parts)) for parts in expected]
    assert len(want) > 50
    for size in (1, 7, 512, 5000):
        assert list(chunk_items((items[i : i + size] for i in range(0, len(items), size)), 4096)) == want
    snapshots = SnapshotStore(tmp_path)  # the writer's own batches, 1 MiB chunks: here one
    info = snapshots.save(1, b"\0" * 32, iter(items))
    assert info.chunks == 1 and snapshots.load_chunk(1, FORMAT, 0) == encode_chunk(items)


def test_only_the_newest_snapshots_are_kept_and_partial_ones_never_listed(tmp_path: Path) -> None:
    snapshots = SnapshotStore(tmp_path / "snapshots")
    (tmp_path / "snapshots" / ".tmp-5-1").mkdir(parents=True)  # a write a crash interrupted
    (tmp_path / "snapshots" / ".tmp-5-1" / "0").write_bytes(b"partial")
    (tmp_path / "snapshots" / "9-1").mkdir()  # a folder without metadata
    assert snapshots.listed() == []
    manager = SnapshotManager(snapshots, 2, 2)
    assert not (tmp_path / "snapshots" / ".tmp-5-1").exists()
    with CommitStore(str(tmp_path / "db")) as store:
        for height in range(1, 9):
            store.apply({b"k%d" % height: b"v"})
            store.commit()
            manager.after_commit(store)
            manager.wait()
    assert [s.height for s in snapshots.listed()] == [8, 6]
    assert sorted(os.listdir(tmp_path / "snapshots")) == ["6-1", "8-1", "9-1"]


class GatedStore(SnapshotStore):
    """A snapshot store whose writer waits at its first item until the test opens the gate."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gate = threading.Event()
        self.reading = threading.Event()

    def save(
        self,
        height: int,
        app_hash: bytes,
        items: Iterable[tuple[bytes, bytes]],
        between_chunks: Callable[[], None] = lambda: None,
    ) -> SnapshotInfo:
        def gated() -> Iterator[tuple[bytes, bytes]]:
            self.reading.set()
            assert self.gate.wait(30)
            yield from items

        return super().save(height, app_hash, gated(), between_chunks)


def test_a_snapshot_is_written_off_the_committing_thread_from_its_frozen_version(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Commit returns before the snapshot is written; later commits rewrite and delete its keys and pruning
    (keep 2 versions) removes its version's tree meanwhile, and the snapshot is still version H's state."""
    snapshots = GatedStore(tmp_path / "snapshots")
    manager = SnapshotManager(snapshots, 3, 2)
    store = CommitStore(str(tmp_path / "db"), keep_recent=2)
    for height in range(1, 4):
        store.apply(writes(height))
        store.commit()
        manager.after_commit(store)
    assert snapshots.reading.wait(10) and manager.busy and snapshots.listed() == []
    expected_items, expected_root = store.items_at(3), store.root_hash
    caplog.set_level(logging.INFO, "gonkad.snapshots")
    for height in range(4, 8):
        store.apply({**writes(height), **{k: None for k, _ in expected_items[:500]}})
        store.commit()
        manager.after_commit(store)  # height 6 is due while 3 is still written: skipped
    assert store.available_versions() == (6, 7) and snapshots.listed() == []
    assert "snapshot at height 6 skipped" in caplog.text
    snapshots.gate.set()
    manager.wait(30)
    assert [s.height for s in snapshots.listed()] == [3]
    snapshot, chunks = snapshot_of(snapshots, 3)
    assert snapshot_app_hash(snapshot) == expected_root
    fresh = CommitStore(str(tmp_path / "fresh"))
    _, restore = Restore.offer(fresh, 3, FORMAT, snapshot.chunks, snapshot.hash, snapshot.metadata, expected_root)
    assert restore is not None
    assert [restore.apply_chunk(i, c) for i, c in enumerate(chunks)][-1] is Applied.ACCEPT
    assert fresh.items_at(3) == expected_items and fresh.root_hash == expected_root
    fresh.close()
    manager.close()
    store.close()


# --- gonkad snapshots -----------------------------------------------------------------------------------


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gonkad", "snapshots", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )


def one_line_error(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr


def test_cli_exports_lists_restores_and_deletes(source: InProcessChain, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    app_db(home).parent.mkdir(parents=True)
    with InProcessChain(app_db(home), {}) as chain:
        for _ in range(3):
            chain.block(**write_block(chain.height + 1))
        roots = {h: chain.app.store.root_at(h) for h in (3, 4)}
        one_line_error(gonkad("export", "--home", str(home)), "locked by a running node: stop it first")
    assert json.loads(gonkad("list", "--home", str(home)).stdout) == []
    exported = gonkad("export", "--home", str(home), "--height", "3")
    assert exported.returncode == 0, exported.stderr
    assert gonkad("export", "--home", str(home)).returncode == 0
    listed = json.loads(gonkad("list", "--home", str(home)).stdout)
    assert [(s["height"], s["format"]) for s in listed] == [(4, 1), (3, 1)] and listed[1] == json.loads(exported.stdout)
    one_line_error(gonkad("export", "--home", str(home), "--height", "9"), "height 9 is not kept by this node")
    one_line_error(gonkad("restore", "3", "--home", str(home)), "the application store is not empty")

    new_home = tmp_path / "new"
    (new_home / "config").mkdir(parents=True)
    snapshot_dir(new_home).parent.mkdir(parents=True)
    os.rename(snapshot_dir(home), snapshot_dir(new_home))  # the snapshots, brought to a node that has no state
    one_line_error(gonkad("restore", "5", "--home", str(new_home)), "no snapshot at height 5 in format 1")
    restored = gonkad("restore", "4", "--home", str(new_home))
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout) == {"height": 4, "app_hash": roots[4].hex().upper()}
    with CommitStore(str(app_db(new_home))) as store:
        assert (store.version, store.root_hash) == (4, roots[4])

    deleted = gonkad("delete", "3", "--home", str(new_home))
    assert deleted.returncode == 0, deleted.stderr
    assert [s["height"] for s in json.loads(gonkad("list", "--home", str(new_home)).stdout)] == [4]
    one_line_error(gonkad("delete", "3", "--home", str(new_home)), "no snapshot at height 3")
    one_line_error(gonkad("restore", "4", "--home", str(tmp_path / "nowhere")), "no snapshot at height 4")


def test_a_snapshot_being_written_stops_when_the_node_does(tmp_path: Path) -> None:
    snapshots = GatedStore(tmp_path / "snapshots")
    manager = SnapshotManager(snapshots, 1, 2)
    with CommitStore(str(tmp_path / "db")) as store:
        store.apply(writes(1))
        store.commit()
        manager.after_commit(store)
        assert snapshots.reading.wait(10)
        threading.Timer(0.2, snapshots.gate.set).start()  # the writer goes on only once close() has begun
        manager.close()
        assert not manager.busy and snapshots.listed() == [] and os.listdir(tmp_path / "snapshots") == []
        store.apply({b"k": b"v"})
        store.commit()
        manager.after_commit(store)  # a closed manager takes no more
        assert not manager.busy


def test_app_toml_state_sync_reaches_the_node_app(tmp_path: Path) -> None:
    """``[state_sync]`` is written to and read from app.toml, and the node's app takes snapshots as it says."""
    from gonkad.config import AppConfig, StateSyncConfig, load_app_config, save_app_config
    from gonkad.node import _open_app

    (tmp_path / "config").mkdir()
    assert AppConfig().state_sync == StateSyncConfig(snapshot_interval=0, snapshot_keep_recent=2)
    save_app_config(tmp_path, AppConfig(state_sync=StateSyncConfig(snapshot_interval=10, snapshot_keep_recent=3)))
    assert (
        "[state_sync]\nsnapshot_interval = 10\nsnapshot_keep_recent = 3\n"
        in (tmp_path / "config" / "app.toml").read_text()
    )
    store, app = _open_app(tmp_path, load_app_config(tmp_path), False, None)
    try:
        assert app.snapshots is not None
        assert (app.snapshots.interval, app.snapshots.keep_recent) == (10, 3)
        assert app.snapshots.snapshots.root == snapshot_dir(tmp_path)
    finally:
        store.close()
