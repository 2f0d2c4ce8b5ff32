"""``PocDuty``: the host's PoC V2 validations (host/README.md, "PoC V2 duties"). The chain draws finished
inferences of other hosts for this host to re-execute (x/poc's ``Assigned``); for each, earliest deadline first,
the duty fetches the payload from the executor's host, checks it against the chain's hashes, re-executes it on
its own ML node (``/v1/verify``), and sends ``MsgValidateInference`` with the node's verdict and score before the
deadline. A payload the executor does not serve after ``fetch_attempts`` tries (or by ``margin_blocks`` before the
deadline), or one that is not what the chain's hashes commit to, is a failed validation: MISMATCH, score 0.

A payload that matches the chain's hashes is kept (``Payloads.keep``, the host's payload store) when this host is
the drawn validator, so that, should its verdict open a dispute, its host serves the payload to the voters. A
voter asks the executor's host first, then the accuser's (``_sources``), and re-executes the first payload that
matches the chain's hashes: an executor that goes away during a dispute is judged on what the voters re-execute.
An accuser's payload that does not match is refused (the executor is not judged on it); one served by no one is
as above.

Every verdict is journalled before it is sent (``VerdictJournal``), so a restart sends it again without
re-executing; a verdict whose inference left ``Assigned`` (landed, or its window closed) is never sent again; one
still awaited ``resend_blocks`` after its transaction went out (CheckTx took it, but it failed in its block or fell
out of the mempool) is sent again. An inference whose deadline is past the next block is left alone."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from host.poc.chain import PocChain
from host.poc.config import PocConfig
from host.poc.counts import PocCounts
from host.poc.fetch import PayloadFetcher
from host.poc.journal import Verdict, VerdictJournal
from host.poc.judge import answer_problem, hash_mismatch, score_ppm, verify_body
from host.poc.node import Refused, VerifyNode
from host.poc.route import Payloads
from host.poc.wire import Payload
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.poc.v1 import poc_pb2
from x.poc.client.payload import deadline
from x.poc.client.queries import VERDICTS, validate_message

logger = logging.getLogger("gonka.host.poc")


class ChainUnclear(Exception):
    """The chain's record of an inference could not be read: judged again at the next step."""


class PocDuty:
    """One host's validations; ``step`` judges one inference and sends every verdict due."""

    def __init__(
        self,
        chain: PocChain,
        node: VerifyNode,
        fetcher: PayloadFetcher,
        journal: VerdictJournal,
        config: PocConfig,
        counts: PocCounts,
        payloads: Payloads | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chain, self.node, self.fetcher, self.journal = chain, node, fetcher, journal
        self.config, self.counts, self.clock = config, counts, clock
        self.payloads = payloads
        """Where this host keeps the payloads it checked as the drawn validator (None: kept nowhere, so its
        dispute's voters can only ask the executor)."""
        self.tries: dict[bytes, int] = {}
        """Inference id → fetches that found no payload so far."""
        self.retry_at: dict[bytes, float] = {}
        self.late: set[bytes] = set()
        self.thresholds: dict[str, tuple[int, float]] = {}
        """Model id → its verification threshold (parts per million) and when it was read from the chain."""

    def step(self) -> bool:
        """Judge the first inference awaiting a verdict (if any is due for judging) and send every verdict due;
        True when more is to be done at once."""
        height = self.chain.height()
        awaiting = [record for record in self.chain.assigned() if self._awaits(record)]
        self._forget({record.inference_id for record in awaiting})
        due = [record for record in awaiting if deadline(record) > height]
        self._count_late(record for record in awaiting if deadline(record) <= height)
        now = self.clock()
        judging = [
            r for r in due if self.journal.get(r.inference_id) is None and self.retry_at.get(r.inference_id, 0) <= now
        ]
        if judging:
            try:
                self._judge(judging[0], height)
            except Exception as error:  # its ML node or chain node failed: judged again; what is reached still goes
                self.counts.errors += 1
                logger.warning("inference %s: not judged yet: %r", judging[0].inference_id.hex(), error)
        ready = [record for record in due if self._ready(record.inference_id, height)]
        if ready:
            self._send(ready[: self.config.max_batch], height)
        return len(judging) > 1 or len(ready) > self.config.max_batch

    def _awaits(self, record: poc_pb2.Validation) -> bool:
        """Whether ``record`` still awaits this host's verdict: listed by ``Assigned``, and not one this host
        already gave as its drawn validator (a disputed inference is listed for its dispute's voters)."""
        return not (record.validator == self.chain.address and record.verdict != poc_pb2.VERDICT_UNSPECIFIED)

    def _forget(self, awaiting: set[bytes]) -> None:
        """Drop what is kept of the inferences that no longer await this host's verdict (landed, or window over)."""
        self.journal.keep_only(awaiting)
        for kept in (self.tries, self.retry_at):
            for inference_id in [i for i in kept if i not in awaiting]:
                del kept[inference_id]
        self.late &= awaiting

    def _count_late(self, records: Iterable[poc_pb2.Validation]) -> None:
        for record in records:
            if record.inference_id not in self.late:
                self.late.add(record.inference_id)
                self.counts.late += 1
                logger.warning("inference %s: its deadline passed before a verdict went out", record.inference_id.hex())

    def _ready(self, inference_id: bytes, height: int) -> bool:
        """A verdict reached that was never sent, or sent ``resend_blocks`` ago and still awaited."""
        verdict = self.journal.get(inference_id)
        return verdict is not None and (
            not verdict.sent_height or height >= verdict.sent_height + self.config.resend_blocks
        )

    def _judge(self, record: poc_pb2.Validation, height: int) -> None:
        """Reach and journal ``record``'s verdict; nothing when its payload is to be tried again later."""
        inference_id = record.inference_id
        verdict = self._verdict(record, height)
        if verdict is None:
            return
        self.tries.pop(inference_id, None)
        self.retry_at.pop(inference_id, None)
        self.journal.reached(inference_id, verdict)
        self.counts.record(
            {"id": inference_id.hex(), "match": verdict.match, "score": verdict.score, "reason": verdict.reason}
        )
        logger.info(
            "inference %s of %s: %s, score %d (%s)",
            inference_id.hex(), record.executor, "MATCH" if verdict.match else "MISMATCH", verdict.score,
            verdict.reason,
        )  # fmt: skip

    def _verdict(self, record: poc_pb2.Validation, height: int) -> Verdict | None:
        if self.config.fault == "accuse":
            self.counts.mismatched += 1
            return Verdict(False, 0, "accused unseen (TEST-ONLY fault)")
        inference_id = record.inference_id
        chained = self.chain.inference(inference_id)
        if chained is None:
            raise ChainUnclear(f"inference {inference_id.hex()}: the chain's record could not be read")
        payload, served_by, missed = self._fetch(record, chained)
        if payload is None:
            if missed is not None:
                self.counts.tampered += 1
                return Verdict(False, 0, f"payload: {missed}")
            tries = self.tries[inference_id] = self.tries.get(inference_id, 0) + 1
            if tries < self.config.fetch_attempts and deadline(record) - height > self.config.margin_blocks:
                self.retry_at[inference_id] = self.clock() + self.config.retry_s
                return None
            self.counts.unserved += 1
            return Verdict(False, 0, f"payload not served ({tries} tries)")
        if record.validator == self.chain.address and self.payloads is not None:
            self.payloads.keep(inference_id, payload.body, payload.answer)
        verdict = self._reexecute(payload, chained)
        if served_by != record.executor:
            self.counts.accuser_served += 1
            verdict.reason += " (the accuser's copy)"
        return verdict

    def _reexecute(self, payload: Payload, chained: inference_pb2.Inference) -> Verdict:
        """The verdict on a payload that matches the chain's hashes (``_fetch`` checked them): MISMATCH, score 0,
        when its answer cannot be re-executed; else the ML node's."""
        threshold = self._threshold(chained.model)  # read before judging: a failed read is no verdict yet
        problem = answer_problem(payload)
        if problem is None:
            try:
                body = verify_body(payload, chained, threshold)
            except ValueError as error:
                problem = f"body: {error}"
        if problem is not None:
            self.counts.tampered += 1
            return Verdict(False, 0, f"payload: {problem}")
        try:
            found = self.node.verify(body)
        except Refused as error:
            self.counts.tampered += 1
            return Verdict(False, 0, f"refused by the ML node: {error}")
        if found.match:
            self.counts.matched += 1
        else:
            self.counts.mismatched += 1
        return Verdict(found.match, score_ppm(found.score), ",".join(found.reasons) or ("match" if found.match else ""))

    def _gas(self, record: poc_pb2.Validation) -> int:
        """A verdict's gas; a vote's covers settling the dispute, which the last vote does (``PocConfig``)."""
        if record.status != poc_pb2.STATUS_DISPUTED:
            return self.config.validate_gas
        return self.config.vote_gas + self.config.vote_gas_per_voter * len(record.votes)

    def _sources(self, record: poc_pb2.Validation) -> list[str]:
        """The hosts to ask for ``record``'s payload, in order: its executor; and, for a dispute this host votes on,
        then the accuser, which kept the payload it checked."""
        if record.status == poc_pb2.STATUS_DISPUTED and record.validator and record.validator != self.chain.address:
            return [record.executor, record.validator]
        return [record.executor]

    def _fetch(
        self, record: poc_pb2.Validation, chained: inference_pb2.Inference
    ) -> tuple[Payload | None, str, str | None]:
        """The first payload a source serves that matches the chain's hashes, and its host; else no payload and
        which hash the executor's own payload missed (its answer's fault), or None when it served none."""
        inference_id, missed = record.inference_id, None
        for host in self._sources(record):
            payload = self.fetcher.fetch(self.chain.urls(host), host, inference_id)
            if payload is None:
                continue
            mismatch = hash_mismatch(payload, chained)
            if mismatch is None:
                return payload, host, None
            if host == record.executor:
                missed = mismatch
            else:
                self.counts.accuser_tampered += 1
                logger.warning(
                    "inference %s: the accuser %s served a payload that does not match the chain's %s: refused",
                    inference_id.hex(), host, mismatch,
                )  # fmt: skip
        return None, "", missed

    def _threshold(self, model: str) -> int:
        """``model``'s threshold on chain, read again once ``threshold_ttl_s`` old (a failed read raises: the
        inference is judged again at the next step)."""
        now = self.clock()
        cached = self.thresholds.get(model)
        if cached is None or now - cached[1] >= self.config.threshold_ttl_s:
            cached = self.thresholds[model] = (self.chain.threshold(model), now)
        return cached[0]

    def _send(self, ready: list[poc_pb2.Validation], height: int) -> None:
        ids = [record.inference_id for record in ready]
        messages = []
        for inference_id in ids:
            verdict = self.journal.verdicts[inference_id]
            messages.append(
                validate_message(
                    self.chain.address, inference_id, VERDICTS["match" if verdict.match else "mismatch"], verdict.score
                )
            )
        again = sum(1 for inference_id in ids if self.journal.verdicts[inference_id].sent_height)
        tx = self.chain.send(messages, sum(self._gas(record) for record in ready))
        self.journal.sent(ids, height, tx)
        self.counts.verdicts_sent += len(messages)
        logger.info("%d verdict(s) sent (%d again) in tx %s", len(messages), again, tx)
