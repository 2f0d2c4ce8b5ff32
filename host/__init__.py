"""The host's program (``host/README.md`` is its spec): the executor proxy in front of its ML node, and what it
does on chain (finishing what its node served), its race duties in every epoch (``host.sprint``), and its PoC V2
duties (``host.poc``: keeping its answers' payloads, re-executing what the chain draws for it).

- ``proxy.py``: ``Executor``, the ASGI app; ``config.py``: ``ExecutorConfig`` and the protocols it is handed;
  ``counters.py``: ``Counts``;
- ``terms.py``: what the node is asked (``node_body``); ``shown.py``: what of its answer the client gets
  (``Shown``); ``digest.py``: the finish of an answer (``Digest``) and the answer as kept (``KeptAnswer``);
- ``admission.py``: ``StartAdmission``, whether the chain will pay for a request its TA forwarded;
  ``committed.py``: ``CommittedInferences``, this host's inference records as each block's events leave them
  (the admission's and the finisher's, shared);
- ``finisher.py``: ``Finisher``, the host's ``MsgFinishInference``s, seen through; ``journal.py``:
  ``FinishJournal``, the finisher's unsettled finishes on disk.

Import from here (``from host import Executor``): which file holds what is this package's own business.
"""

from host.admission import StartAdmission
from host.config import Admission, ExecutorConfig, FinishSink
from host.digest import Digest, finish_of_answer
from host.finisher import FINISH_GAS, Finisher
from host.journal import FinishJournal
from host.proxy import Executor

__all__ = [
    "FINISH_GAS",
    "Admission",
    "Digest",
    "Executor",
    "ExecutorConfig",
    "FinishJournal",
    "FinishSink",
    "Finisher",
    "StartAdmission",
    "finish_of_answer",
]
