"""``EpochFollower``: the one background thread of the executor process that follows the chain's epochs and runs
the race duties at their stages (``RaceDuty`` in ``STAGE_RACE``, ``ValidationDuty`` in
``STAGE_RACE_VALIDATION``), each tried again within its stage when a step fails; it also holds the openings
route (``Openings``) and the counts (``SprintCounts``) the proxy serves."""

from __future__ import annotations

import logging
import threading
from typing import Any

from host.sprint.chain import EpochNow, SprintChain
from host.sprint.config import SprintConfig
from host.sprint.counts import SprintCounts
from host.sprint.node import RaceNode
from host.sprint.openings import Openings
from host.sprint.race import RaceDuty
from host.sprint.validation import ValidationDuty
from protogen.gonka.epochs.v1 import epochs_pb2
from sdk.client.querier import Querier
from sdk.client.signer import Submit
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1

logger = logging.getLogger("gonka.host.sprint")


class EpochFollower:
    """Polls the chain every ``poll_interval_s`` (at once after a race chunk) and runs the duty of the stage."""

    def __init__(self, chain: SprintChain, node: RaceNode, config: SprintConfig, pubkey: bytes) -> None:
        self.chain, self.node, self.config = chain, node, config
        self.counts = SprintCounts()
        self.race = RaceDuty(chain, node, config, pubkey, self.counts)
        self.validation = ValidationDuty(chain, node, config, self.counts)
        self.openings = Openings(chain, node, self.race, config, self.counts)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if config.fault is not None:
            logger.warning("TEST-ONLY sprint fault %r is on: this host cheats on purpose", config.fault)

    @classmethod
    def of(
        cls, querier: Querier, submit: Submit, key: secp256k1.PrivateKey, mlnode: str, config: SprintConfig
    ) -> EpochFollower:
        """The follower of the host ``key``: its queries, and its transactions through ``submit`` (the process's one
        ``TxSigner``, shared with the finisher)."""
        node = RaceNode(mlnode, config.mlnode_timeout_s)
        return cls(SprintChain(querier, submit, address_of(key)), node, config, key.public_key)

    def status(self) -> dict[str, Any]:
        return self.counts.as_dict()

    def step(self) -> bool:
        """One look at the chain and one step of the duty its stage calls for; True when there is more to do now."""
        now = self.chain.now()
        self._track(now)
        try:
            return self.race.step(now) or self.validation.step(now)
        except Exception as error:  # a node or the chain failed: the duty is tried again within its stage
            self.counts.errors += 1
            logger.warning("epoch %d: %s step failed: %r", now.epoch, self.counts.stage, error)
            return False

    def _track(self, now: EpochNow) -> None:
        stage = epochs_pb2.Stage.Name(now.stage) if now.stage in epochs_pb2.Stage.values() else str(now.stage)
        if (now.epoch, stage) != (self.counts.epoch, self.counts.stage):
            logger.info("epoch %d: %s from height %d", now.epoch, stage, now.height)
            if now.epoch != self.counts.epoch:
                self.counts.proofs = 0
            self.counts.epoch, self.counts.stage = now.epoch, stage

    # --- the thread ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sprint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.config.mlnode_timeout_s + 5)
        self.validation.close()
        self.node.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            busy = False
            try:
                busy = self.step()
            except Exception as error:  # the chain node is unreachable: next poll
                self.counts.errors += 1
                logger.warning("reading the epoch failed: %r", error)
            if not busy:
                self._stop.wait(self.config.poll_interval_s)
