"""``TrainingFollower``: the executor process's thread running the training duty (``TrainingDuty``): a step at
once while there is more to judge, else every ``poll_s``; each failure counted, logged and tried again."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from host.training.chain import TrainingChain
from host.training.config import TrainingConfig, under
from host.training.duty import TrainingDuty
from host.training.fetch import BundleFetcher
from sdk.client.querier import Querier
from sdk.client.signer import Submit

log = logging.getLogger("gonka.host.training")


class TrainingFollower:
    def __init__(self, duty: TrainingDuty) -> None:
        self.duty = duty
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def of(cls, querier: Querier, submit: Submit, address: str, home: Path, config: TrainingConfig) -> TrainingFollower:
        """The duty of the host ``address``: its transactions through ``submit`` (the process's one ``TxSigner``)."""
        chain = TrainingChain(querier, submit, address)
        return cls(TrainingDuty(chain, BundleFetcher(config.fetch_timeout_s), config, under(home, config.cache)))

    def status(self) -> dict[str, Any]:
        return self.duty.counts.as_dict()

    def step(self) -> bool:
        try:
            return self.duty.step()
        except Exception as error:  # its chain node or a replay failed: the next poll tries again
            self.duty.counts.errors += 1
            log.warning("training duty step failed: %r", error)
            return False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="training", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.duty.config.fetch_timeout_s + 5)
        self.duty.fetcher.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.step():
                self._stop.wait(self.duty.config.poll_s)
