"""A host's part in training runs on the network (``host/README.md``, "Training duties"): serving the replay data
of its own workers' rounds, replaying the rounds the chain draws it to verify and sending the verdicts, and
claiming its pay for its VALID checkpoints.

- ``config.py``: ``[training]`` of ``HOME/host.toml``; ``bundle.py``: a round's replay data as flat files;
- ``serve.py``: ``GET /v1/training/<run>/<round>/<worker>/<file>`` (``ReplayData``);
- ``chain.py``: ``TrainingChain``; ``fetch.py``: ``BundleFetcher``; ``duty.py``: ``TrainingDuty``;
  ``counts.py``: its ``"training"`` status; ``follower.py``: ``TrainingFollower``, its thread.
"""

from host.training.config import TrainingConfig, under
from host.training.follower import TrainingFollower
from host.training.serve import ReplayData

__all__ = ["ReplayData", "TrainingConfig", "TrainingFollower", "under"]
