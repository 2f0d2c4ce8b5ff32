"""Restoring a snapshot into an empty store: the state machine behind ABCI's OfferSnapshot and
ApplySnapshotChunk, and ``gonkad snapshots restore``.

Chunks are checked against the metadata's hashes as they come, and their items staged in memory; the
committed store is not touched until the last chunk. Then every item is applied as version ``height`` in one
write, and its root compared with the trusted app hash *before* the commit: a mismatch discards it all and the
store stays empty. Dropping a ``Restore`` (a new offer, a rejected snapshot) leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from sdk.snapshots.format import FORMAT, Metadata, chunk_hash, decode_chunk
from sdk.store.commitstore import CommitStore


class Offered(Enum):
    """ABCI's ``ResponseOfferSnapshot.Result``, by name."""

    ACCEPT = "accept"
    ABORT = "abort"
    REJECT = "reject"
    REJECT_FORMAT = "reject_format"


class Applied(Enum):
    """ABCI's ``ResponseApplySnapshotChunk.Result``, by name: RETRY means the chunk's hash is wrong (refetch
    it, from another sender)."""

    ACCEPT = "accept"
    ABORT = "abort"
    RETRY = "retry"
    REJECT_SNAPSHOT = "reject_snapshot"


class Restore:
    """One accepted snapshot being restored: which chunks have come, and their items."""

    def __init__(self, store: CommitStore, metadata: Metadata, app_hash: bytes) -> None:
        self.store = store
        self.metadata = metadata
        self.app_hash = app_hash
        self._chunks: dict[int, list[tuple[bytes, bytes]]] = {}
        self.done = False

    @classmethod
    def offer(
        cls, store: CommitStore, height: int, format: int, chunks: int, hash: bytes, metadata: bytes, app_hash: bytes
    ) -> tuple[Offered, Restore | None]:
        """Whether to restore the snapshot described (ABCI's ``Snapshot`` fields) whose version's root must be
        ``app_hash``, and the restore if so. Only an empty store restores: ABORT otherwise."""
        if format != FORMAT:
            return Offered.REJECT_FORMAT, None
        if store.version:
            return Offered.ABORT, None
        try:
            decoded = Metadata.decode(metadata)
        except ValueError:
            return Offered.REJECT, None
        if (
            decoded.height != height
            or len(decoded.chunk_hashes) != chunks
            or decoded.hash != hash
            or decoded.app_hash != app_hash
        ):
            return Offered.REJECT, None
        return Offered.ACCEPT, cls(store, decoded, app_hash)

    def apply_chunk(self, index: int, chunk: bytes) -> Applied:
        """Stage chunk ``index`` (any order; CometBFT sends them in index order). After the last one, the whole
        state is applied and committed if its root is the app hash: ACCEPT; REJECT_SNAPSHOT if it is not, if the
        chunk breaks the format or the key order, or its index is out of range; RETRY if its hash is not the
        metadata's."""
        hashes = self.metadata.chunk_hashes
        if self.done or not 0 <= index < len(hashes):
            return Applied.REJECT_SNAPSHOT
        if chunk_hash(chunk) != hashes[index]:
            return Applied.RETRY
        try:
            items = decode_chunk(chunk)
        except ValueError:
            return Applied.REJECT_SNAPSHOT
        before, after = self._chunks.get(index - 1), self._chunks.get(index + 1)
        if (before and before[-1][0] >= items[0][0]) or (after and items[-1][0] >= after[0][0]):
            return Applied.REJECT_SNAPSHOT
        self._chunks[index] = items
        if len(self._chunks) < len(hashes):
            return Applied.ACCEPT
        return self._finish()

    def _finish(self) -> Applied:
        """Every chunk is here (keys increase within and between neighbours, so across all): apply them as
        version ``height``, commit only if the root is the app hash."""
        changes: dict[bytes, bytes | None] = {}
        for index in range(len(self._chunks)):
            changes.update(self._chunks[index])
        self._chunks.clear()
        if len(changes) != self.metadata.items:
            return Applied.REJECT_SNAPSHOT
        self.store.set_initial_version(self.metadata.height)
        if self.store.apply(changes) != self.app_hash:
            self.store.set_initial_version(1)  # discards the staged version; the store is as it was, empty
            return Applied.REJECT_SNAPSHOT
        self.store.commit()
        self.done = True
        return Applied.ACCEPT


def restore_local(store: CommitStore, metadata: bytes, chunks: int, load_chunk: Callable[[int], bytes]) -> None:
    """Restore a node's own stored snapshot (``gonkad snapshots restore``) into its empty ``store``, trusting
    the app hash the metadata recorded; ValueError naming what failed."""
    decoded = Metadata.decode(metadata)
    offered, restore = Restore.offer(store, decoded.height, FORMAT, chunks, decoded.hash, metadata, decoded.app_hash)
    if restore is None:
        reason = "the application store is not empty" if offered is Offered.ABORT else "its metadata is invalid"
        raise ValueError(f"snapshot at height {decoded.height} cannot be restored: {reason}")
    for index in range(chunks):
        applied = restore.apply_chunk(index, load_chunk(index))
        if applied is not Applied.ACCEPT:
            what = "is corrupt" if applied is Applied.RETRY else "does not restore the recorded state"
            raise ValueError(f"snapshot at height {decoded.height}: chunk {index} {what}")
