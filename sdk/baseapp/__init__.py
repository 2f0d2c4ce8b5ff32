"""BaseApp, in files that follow ABCI's phases:

- ``transactions.py``: CheckTx and a transaction's pipeline (decode, stateless checks, ante, messages),
  simulation, and the router for modules that carry messages;
- ``blocks.py``: FinalizeBlock (begin/end block hooks, injected entries, txs) and Commit;
- ``proposals.py``: PrepareProposal, ProcessProposal, ExtendVote, VerifyVoteExtension;
- ``queries.py``: Info, Query and the committed-state jobs queries run on the query workers;
- ``genesis.py``: InitChain and the export of the app state;
- ``statesync.py``: ListSnapshots, LoadSnapshotChunk, OfferSnapshot, ApplySnapshotChunk and the snapshots taken
  after Commit (sdk/snapshots);
- ``state.py``: the state BaseApp itself owns (chain id, consensus params);
- ``core.py``: the fields and helpers the phases share; ``baseapp.py`` joins the phases and builds them.
"""

from sdk.baseapp.baseapp import BaseApp
from sdk.baseapp.state import changed_consensus_params, store_consensus_params, stored_chain_id, stored_consensus_params

__all__ = [
    "BaseApp",
    "changed_consensus_params",
    "store_consensus_params",
    "stored_chain_id",
    "stored_consensus_params",
]
