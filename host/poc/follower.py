"""``PocFollower``: the background thread of the executor process that runs the PoC V2 validation duty
(``PocDuty``): it polls x/poc's ``Assigned`` every ``poll_interval_s`` (at once while there is more to judge) and
holds the counts the proxy serves under ``"poc"``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from host.poc.chain import PocChain
from host.poc.config import PocConfig
from host.poc.counts import PocCounts
from host.poc.duty import PocDuty
from host.poc.fetch import PayloadFetcher
from host.poc.journal import VerdictJournal
from host.poc.node import VerifyNode
from host.poc.route import Payloads
from sdk.client.querier import Querier
from sdk.client.signer import Submit
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1

logger = logging.getLogger("gonka.host.poc")
JOURNAL_NAME = "poc-verdicts.json"


class PocFollower:
    """Runs ``duty.step`` on its own thread (``start``/``stop``), each failure counted, logged and tried again."""

    def __init__(self, duty: PocDuty, config: PocConfig) -> None:
        self.duty, self.config = duty, config
        self.counts = duty.counts
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if config.fault is not None:
            logger.warning("TEST-ONLY PoC fault %r is on: this host judges falsely on purpose", config.fault)

    @classmethod
    def of(
        cls,
        querier: Querier,
        submit: Submit,
        height: Callable[[], int],
        key: secp256k1.PrivateKey,
        mlnode: str,
        config: PocConfig,
        payloads: Payloads | None = None,
        upstream: Callable[[str], str | None] | None = None,
    ) -> PocFollower:
        """The duty of the host ``key``: its queries, its transactions through ``submit`` (the process's one
        ``TxSigner``, shared with the finisher), re-executing on its ML node ``mlnode`` (or the node ``upstream``
        names for a model: a fetched model's), keeping the payloads it checks as the drawn validator in
        ``payloads`` (the proxy's, which serves them to its disputes' voters)."""
        duty = PocDuty(
            PocChain(querier, submit, address_of(key), height),
            VerifyNode(mlnode, config.verify_timeout_s, upstream),
            PayloadFetcher(key, config.fetch_timeout_s),
            VerdictJournal(config.home / JOURNAL_NAME),
            config,
            PocCounts(),
            payloads,
        )
        return cls(duty, config)

    def status(self) -> dict[str, Any]:
        return self.counts.as_dict()

    def step(self) -> bool:
        """One step of the duty; True when there is more to do at once."""
        try:
            return self.duty.step()
        except Exception as error:  # its ML node or its chain node failed: the next poll tries again
            self.counts.errors += 1
            logger.warning("PoC validation step failed: %r", error)
            return False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="poc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.config.verify_timeout_s + 5)
        self.duty.node.close()
        self.duty.fetcher.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.step():
                self._stop.wait(self.config.poll_interval_s)
