"""``ValidationDuty``: the host's checks in each epoch's ``STAGE_RACE_VALIDATION`` (host/README.md, "The race
duties"), when it holds power in the validator set in force: every other host's openings fetched from its
registered URL, verified on this host's own ML node against what the chain recorded (root, count, the host's key)
and the pair randomness, and ALL the verdicts sent as ``MsgSprintValidation``s in one transaction. Openings that
cannot be fetched or do not parse count as failing every sample. A pair on chain is never sent again; a pair still
missing ``RESEND_BLOCKS`` after its transaction went out (CheckTx took it, but it failed in its block or fell out
of the mempool) is sent again with the same verdict, until the stage ends."""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

from host.sprint.chain import STAGE_RACE_VALIDATION, EpochNow, SprintChain
from host.sprint.config import SprintConfig
from host.sprint.counts import SprintCounts
from host.sprint.node import NodeError, RaceNode
from protogen.gonka.sprint.v1 import sprint_pb2
from x.sprint.client.queries import validation_message
from x.sprint.client.randomness import pair_randomness

logger = logging.getLogger("gonka.host.sprint")
RETRY_S = 0.5
"""The pause between two tries at a host's openings."""
RESEND_BLOCKS = 3
"""Blocks a sent validation transaction has to land in before the pairs still missing are sent again."""


class ValidationDuty:
    """One host's validations; ``step`` judges what is left of ``now``'s epoch and sends it in one transaction."""

    def __init__(self, chain: SprintChain, node: RaceNode, config: SprintConfig, counts: SprintCounts) -> None:
        self.chain, self.node, self.config, self.counts = chain, node, config, counts
        self.fetcher = httpx.Client(timeout=config.fetch_timeout_s)
        self.done: set[int] = set()
        self.started: set[int] = set()
        self.sent: dict[int, int] = {}
        """epoch → the height its last validation transaction went out at."""
        self.failures: dict[tuple[int, str], int] = {}
        """(epoch, host) → failures, judged once even when the transaction is sent again."""

    def close(self) -> None:
        self.fetcher.close()

    def step(self, now: EpochNow) -> bool:
        """Judge and send ``now``'s epoch's validations; False when there is nothing (left) to do."""
        epoch = now.epoch
        if now.stage != STAGE_RACE_VALIDATION or epoch in self.done:
            return False
        if epoch in self.sent and now.height < self.sent[epoch] + RESEND_BLOCKS:
            return False  # the last transaction may still land
        if self.chain.power() == 0:
            self.done.add(epoch)
            self.counts.skip(f"epoch {epoch}: no power in the validator set in force, not validating")
            logger.info("epoch %d: no power in the validator set in force, not validating", epoch)
            return False
        randomness = self.chain.race(epoch).randomness
        if not randomness:
            return False  # fixed at the stage's first block: next poll
        samples = self.chain.params().samples
        on_chain = self.chain.validated(epoch)
        due = [c for c in self.chain.commitments(epoch) if c.host != self.chain.address and c.host not in on_chain]
        if due and epoch not in self.started:
            self.started.add(epoch)
            logger.info("epoch %d: validating %d host(s)", epoch, len(due))
        if not due:
            self.done.add(epoch)
            return False
        messages = [
            validation_message(self.chain.address, epoch, c.host, samples, self._failures(c, randomness, samples))
            for c in due
        ]
        again = " again" if epoch in self.sent else ""
        tx = self.chain.send(messages, self.config.validation_gas * len(messages))
        self.sent[epoch] = now.height
        self.counts.validations_sent += len(messages)
        logger.info("epoch %d: %d validation(s) sent%s (tx %s)", epoch, len(messages), again, tx)
        return False

    def _failures(self, commitment: sprint_pb2.Commitment, randomness: bytes, samples: int) -> int:
        key = (commitment.epoch, commitment.host)
        if key not in self.failures:
            self.failures[key] = self._judge(commitment, randomness, samples)
        return self.failures[key]

    def _judge(self, commitment: sprint_pb2.Commitment, randomness: bytes, samples: int) -> int:
        """The failures of ``commitment`` for this validator: the ML node's verdict; every sample when the host's
        openings cannot be had or are malformed."""
        if self.config.fault == "lazy-validator":
            return 0  # TEST ONLY: judged valid unseen
        pair = pair_randomness(randomness, self.chain.address, commitment.host)
        openings = self._fetch(commitment.epoch, commitment.host)
        if openings is None:
            return samples
        body = {
            "root": commitment.root.hex(),
            "count": commitment.count,
            "r_target": self.node.race().r_target,
            "seed": self.chain.race(commitment.epoch).seed.hex(),
            "pubkey": commitment.pubkey.hex(),
        }
        try:
            verdict = self.node.verify(body, pair, openings)
        except NodeError as error:
            if error.status != 400:
                raise  # this host's own node failed: judged again at the next step
            logger.warning("epoch %d: %s's openings are malformed: %s", commitment.epoch, commitment.host, error)
            return samples
        logger.info(
            "epoch %d: %s has %d failure(s) of %d%s",
            commitment.epoch, commitment.host, verdict.failures, verdict.samples, " (fraud)" if verdict.fraud else "",
        )  # fmt: skip
        return min(verdict.failures, samples)

    def _fetch(self, epoch: int, host: str) -> list[Any] | None:
        """``host``'s openings for this validator, from any URL it registered; None when none answers with a list."""
        for attempt in range(self.config.fetch_attempts):
            for url in self.chain.urls(host):
                try:
                    response = self.fetcher.get(
                        url.rstrip("/") + "/v1/sprint/openings",
                        params={"epoch": epoch, "validator": self.chain.address},
                    )
                    openings = response.json().get("openings") if response.status_code == 200 else None
                except (httpx.HTTPError, ValueError, AttributeError):
                    openings = None
                if isinstance(openings, list):
                    return openings
            if attempt + 1 < self.config.fetch_attempts:
                time.sleep(RETRY_S)
        logger.warning("epoch %d: no openings from %s: every sample fails", epoch, host)
        return None
