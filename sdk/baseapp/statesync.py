"""State sync: ListSnapshots and LoadSnapshotChunk serve this node's snapshots (sdk/snapshots), OfferSnapshot
and ApplySnapshotChunk restore one into an empty node, and Commit hands each committed height to the
snapshot manager, which snapshots due heights on its own thread.

Every call here runs on the event loop like the rest of ABCI; the work that takes long (writing a snapshot)
runs on the manager's thread, and a chunk served or applied is about 1 MiB.
"""

from __future__ import annotations

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.baseapp.blocks import Blocks
from sdk.baseapp.core import log
from sdk.snapshots.manager import SnapshotManager
from sdk.snapshots.restore import Applied, Restore
from sdk.store.cachekv import CacheKV


class StateSync(Blocks):
    """The snapshot connection's ABCI methods, and snapshots after Commit."""

    snapshots: SnapshotManager | None
    """Takes and serves this node's snapshots; None: none are taken or served (restoring works without)."""
    restoring: Restore | None
    """The snapshot OfferSnapshot accepted, until its last chunk or another offer."""

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        response = super().commit(req)
        if self.snapshots is not None:
            self.snapshots.after_commit(self.store)
        return response

    def list_snapshots(self, req: abci.RequestListSnapshots) -> abci.ResponseListSnapshots:
        stored = self.snapshots.snapshots.listed() if self.snapshots is not None else []
        return abci.ResponseListSnapshots(
            snapshots=[
                abci.Snapshot(height=s.height, format=s.format, chunks=s.chunks, hash=s.hash, metadata=s.metadata)
                for s in stored
            ]
        )

    def load_snapshot_chunk(self, req: abci.RequestLoadSnapshotChunk) -> abci.ResponseLoadSnapshotChunk:
        if self.snapshots is None:
            return abci.ResponseLoadSnapshotChunk()
        return abci.ResponseLoadSnapshotChunk(chunk=self.snapshots.load_chunk(req.height, req.format, req.chunk))

    def offer_snapshot(self, req: abci.RequestOfferSnapshot) -> abci.ResponseOfferSnapshot:
        """Accept a snapshot of a format this app writes, whose metadata agrees with it and the trusted app hash,
        for a node that has no state (no block committed, no InitChain pending); a new offer drops the last."""
        self.restoring = None
        if self.pending_genesis is not None:
            return abci.ResponseOfferSnapshot(result=abci.ResponseOfferSnapshot.ABORT)
        s = req.snapshot
        offered, self.restoring = Restore.offer(
            self.store, s.height, s.format, s.chunks, s.hash, s.metadata, req.app_hash
        )
        log.info("offered snapshot at height %d (format %d, %d chunks): %s", s.height, s.format, s.chunks, offered.name)
        return abci.ResponseOfferSnapshot(result=abci.ResponseOfferSnapshot.Result.Value(offered.name))

    def apply_snapshot_chunk(self, req: abci.RequestApplySnapshotChunk) -> abci.ResponseApplySnapshotChunk:
        """A chunk of the accepted snapshot. A corrupt one is refetched, and its sender rejected; after the last,
        the restored state is committed and this app starts from it."""
        if self.restoring is None:
            return abci.ResponseApplySnapshotChunk(result=abci.ResponseApplySnapshotChunk.ABORT)
        applied = self.restoring.apply_chunk(req.index, req.chunk)
        response = abci.ResponseApplySnapshotChunk(result=abci.ResponseApplySnapshotChunk.Result.Value(applied.name))
        if applied is Applied.RETRY:
            response.refetch_chunks.append(req.index)
            if req.sender:
                response.reject_senders.append(req.sender)
            log.warning(
                "snapshot chunk %d refused: it does not match its hash; sender %s rejected", req.index, req.sender
            )
        elif applied is Applied.REJECT_SNAPSHOT:
            log.warning("snapshot at height %d rejected at chunk %d", self.restoring.metadata.height, req.index)
            self.restoring = None
        elif self.restoring.done:
            log.info("restored snapshot at height %d, app hash %s", self.store.version, self.store.root_hash.hex())
            self.restoring = None
            self.check_state = CacheKV(self.store)
            self._last_check_header = None
        return response
