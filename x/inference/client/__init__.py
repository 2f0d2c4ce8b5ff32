"""x/inference for programs (the client library), one concern a file:

- ``chain_types.py``: the data the TA's ``agent.chain.ChainView`` speaks in (``Model``, ``Node``,
  ``StartRequest``, ``ChainError``, ``REFUSALS``), the executor's ``Finish``, and ``refusal`` (a CheckTx refusal
  as ``ChainError``, for a ``sdk.client.signer.TxSigner``);
- ``queries.py``: the inference record (``inference``), the registered models (``models``), a host's node URLs
  (``node_urls``), a model's
  verification threshold in force (``verify_threshold``), and the start and finish messages as the TA and the
  host build them;
- ``funds.py``: a requester's balance per committed height less the escrows let through and not yet in a block
  (``Funds``), for a TA or a host admitting paid requests without a chain read each;
- ``verify.py``: what a start transaction says of one inference for one host (``named_escrow``, ``Named``);
- ``terms.py``: what a chat request commits to (``parse_terms``, ``ChatTerms.params_hash``), read the same way by
  the TA and the host.

The programs' runtimes are theirs: the TA's chain view and start batcher are ``agent/``, the host's finisher,
journal and admission ``host/``. Import from here (``from x.inference.client import Finish``): which file holds
what is this package's own business.
"""

from x.inference.client.chain_types import REFUSALS, ChainError, Finish, Model, Node, StartRequest, refusal
from x.inference.client.funds import Funds
from x.inference.client.queries import (
    finish_message,
    inference,
    models,
    node_urls,
    start_message,
    verify_threshold,
)
from x.inference.client.terms import ChatTerms, parse_request, parse_terms
from x.inference.client.verify import Named, named_escrow

__all__ = [
    "REFUSALS",
    "ChainError",
    "ChatTerms",
    "Finish",
    "Funds",
    "Model",
    "Named",
    "Node",
    "StartRequest",
    "finish_message",
    "inference",
    "models",
    "named_escrow",
    "node_urls",
    "parse_request",
    "parse_terms",
    "refusal",
    "start_message",
    "verify_threshold",
]
