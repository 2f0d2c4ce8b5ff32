"""The host's PoC V2 duties (host/README.md, "PoC V2 duties"): as an executor, keeping the payload of every answer
it finishes and serving it to the validator and the dispute's voters the chain draws (``Payloads``); as a validator
or voter, re-executing what the chain draws for it and sending its verdicts (``PocFollower`` running ``PocDuty`` on
one thread), keeping each payload it checked as the validator and serving it to its dispute's voters, should the
executor go away.

- ``config.py``: ``PayloadConfig``, ``PocConfig``, the test-only ``FAULTS``; ``counts.py``: the ``"poc"`` status;
- ``payloads.py``: ``PayloadStore``, the payloads on disk; ``wire.py``: the payload request and answer;
  ``route.py``: ``Payloads``, keeping and ``POST /v1/poc/payload``;
- ``chain.py``: ``PocChain``; ``fetch.py``: ``PayloadFetcher``; ``judge.py``: the payload's checks and the verify
  body; ``node.py``: ``VerifyNode``; ``journal.py``: ``VerdictJournal``; ``duty.py``: ``PocDuty``;
  ``follower.py``: ``PocFollower``.
"""

from host.poc.config import FAULTS, PayloadConfig, PocConfig
from host.poc.follower import PocFollower
from host.poc.payloads import PayloadStore
from host.poc.route import Payloads

__all__ = ["FAULTS", "PayloadConfig", "PayloadStore", "Payloads", "PocConfig", "PocFollower"]
