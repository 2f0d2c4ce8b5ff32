"""x/inference for programs (the client library), one concern a file:

- ``chain_types.py``: the data the TA's ``agent.chain.ChainView`` speaks in (``Model``, ``Node``,
  ``StartRequest``, ``ChainError``, ``REFUSALS``) and the executor's ``Finish``;
- ``signer.py``: ``TxSigner``, one key's transactions at a sequence counted locally, CheckTx refusals as
  ``ChainError``;
- ``base.py``: ``ChainClient``, what the view and the finisher share: queries (over one kept-open gRPC channel
  when ``grpc_addr`` is given, else CometBFT RPC's ABCI query), CometBFT's ``status`` cached briefly, the
  inference record, a ``TxSigner``;
- ``view.py``: ``ChainInferenceView``, the ``ChainView`` protocol over a node, for a Transfer Agent;
- ``batcher.py``: ``StartBatcher``, the TA's starts that arrive during a send go out together in the next;
- ``finisher.py``: ``Finisher``, the executing host's ``MsgFinishInference``s, sent once the start is on chain
  and seen through;
- ``journal.py``: ``FinishJournal``, the finisher's unsettled finishes on disk, queued again after a restart;
- ``admission.py``: ``StartAdmission``, whether the chain will pay the host for a request its TA forwarded.

Import from here (``from x.inference.client import Finisher``): which file holds what is this package's own
business.
"""

from x.inference.client.admission import StartAdmission
from x.inference.client.chain_types import REFUSALS, ChainError, Finish, Model, Node, StartRequest
from x.inference.client.finisher import FINISH_GAS, Finisher
from x.inference.client.journal import FinishJournal
from x.inference.client.signer import TxSigner
from x.inference.client.view import DEFAULT_GAS_LIMIT, ChainInferenceView

__all__ = ["DEFAULT_GAS_LIMIT", "FINISH_GAS", "REFUSALS", "ChainError", "ChainInferenceView", "Finish", "FinishJournal",
           "Finisher", "Model", "Node", "StartAdmission", "StartRequest", "TxSigner"]
