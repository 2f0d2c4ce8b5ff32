"""Base ABCI 2.0 application with safe defaults for every method.

Method names equal the ``oneof value`` field names of ``tendermint.abci.Request``
so the server can dispatch by name.  Defaults follow CometBFT v0.38's Go
``BaseApplication`` (abci/types/application.go) where that is usable, and pick
an explicit result where the Go default (enum UNKNOWN) would make CometBFT
fail: an app without snapshot support rejects offered snapshots and aborts
chunk application.

Methods are synchronous on purpose: the state machine is single-threaded and
the server calls one method at a time, on its event loop, across all four
CometBFT connections.  The one exception is the job ``begin_query`` may return
for a query: the server may run it on a worker thread while other calls go on,
so it must read only what was captured for it when it was made.
"""

from __future__ import annotations

from collections.abc import Callable

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.abci.blocks import fit_txs

CODE_TYPE_OK = 0


class Application:
    """Override the methods the app needs; the rest answer with defaults."""

    def echo(self, req: abci.RequestEcho) -> abci.ResponseEcho:
        return abci.ResponseEcho(message=req.message)

    def flush(self, req: abci.RequestFlush) -> abci.ResponseFlush:
        return abci.ResponseFlush()

    def info(self, req: abci.RequestInfo) -> abci.ResponseInfo:
        return abci.ResponseInfo()

    def init_chain(self, req: abci.RequestInitChain) -> abci.ResponseInitChain:
        """Empty response: CometBFT keeps the genesis validators and params."""
        return abci.ResponseInitChain()

    def query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        return abci.ResponseQuery(code=CODE_TYPE_OK)

    def begin_query(self, req: abci.RequestQuery) -> abci.ResponseQuery | Callable[[], abci.ResponseQuery]:
        """What the server calls for a Query, on the loop: the answer, or a job to
        compute it that is safe on a worker thread.  Default: answer at once."""
        return self.query(req)

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        return abci.ResponseCheckTx(code=CODE_TYPE_OK)

    def prepare_proposal(self, req: abci.RequestPrepareProposal) -> abci.ResponsePrepareProposal:
        """Keep the proposed txs in order, stopping before max_tx_bytes is exceeded.

        CometBFT rejects a proposal whose txs exceed max_tx_bytes (counted as
        their protobuf size, ``sdk.abci.blocks.proto_tx_size``), so the default
        must not just echo ``req.txs``.
        """
        return abci.ResponsePrepareProposal(txs=fit_txs(req.txs, req.max_tx_bytes))

    def process_proposal(self, req: abci.RequestProcessProposal) -> abci.ResponseProcessProposal:
        return abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.ACCEPT)

    def extend_vote(self, req: abci.RequestExtendVote) -> abci.ResponseExtendVote:
        return abci.ResponseExtendVote()

    def verify_vote_extension(self, req: abci.RequestVerifyVoteExtension) -> abci.ResponseVerifyVoteExtension:
        return abci.ResponseVerifyVoteExtension(status=abci.ResponseVerifyVoteExtension.ACCEPT)

    def finalize_block(self, req: abci.RequestFinalizeBlock) -> abci.ResponseFinalizeBlock:
        """One OK result per tx: CometBFT requires len(tx_results) == len(txs)."""
        return abci.ResponseFinalizeBlock(tx_results=[abci.ExecTxResult(code=CODE_TYPE_OK) for _ in req.txs])

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        return abci.ResponseCommit()

    def list_snapshots(self, req: abci.RequestListSnapshots) -> abci.ResponseListSnapshots:
        return abci.ResponseListSnapshots()

    def offer_snapshot(self, req: abci.RequestOfferSnapshot) -> abci.ResponseOfferSnapshot:
        """REJECT: this snapshot is unusable; CometBFT may try others or block sync."""
        return abci.ResponseOfferSnapshot(result=abci.ResponseOfferSnapshot.REJECT)

    def load_snapshot_chunk(self, req: abci.RequestLoadSnapshotChunk) -> abci.ResponseLoadSnapshotChunk:
        return abci.ResponseLoadSnapshotChunk()

    def apply_snapshot_chunk(self, req: abci.RequestApplySnapshotChunk) -> abci.ResponseApplySnapshotChunk:
        """ABORT: no snapshot was accepted, so restoration cannot proceed."""
        return abci.ResponseApplySnapshotChunk(result=abci.ResponseApplySnapshotChunk.ABORT)
