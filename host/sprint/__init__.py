"""The host's race duties (host/README.md, "The race duties"): racing on its ML node and committing in each
epoch's race stage, serving openings of what it committed, validating the other hosts in the race-validation
stage; ``EpochFollower`` runs them on one thread of the executor process.

- ``config.py``: ``SprintConfig``, the test-only ``FAULTS``; ``faults.py``: what a faulty host does;
- ``chain.py``: ``SprintChain``, the chain as the duties see it; ``node.py``: ``RaceNode``, the ML node's routes;
- ``journal.py``: ``RaceJournal``, an epoch's race on disk; ``counts.py``: ``SprintCounts``;
- ``race.py``: ``RaceDuty``; ``openings.py``: ``Openings``; ``validation.py``: ``ValidationDuty``;
- ``follower.py``: ``EpochFollower``.
"""

from host.sprint.config import FAULTS, SprintConfig
from host.sprint.follower import EpochFollower

__all__ = ["FAULTS", "EpochFollower", "SprintConfig"]
