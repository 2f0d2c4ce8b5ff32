"""``TrainingDuty``: a host's part in training runs on the network (host/README.md, "Training duties").

As a verifier: x/learning draws hosts to replay a worker's round when its checkpoint is committed
(``Query/Assigned``). For each such checkpoint the duty fetches the round's replay data from the worker's host
(``fetch.py``), replays the round (``diloco.replay``, the code behind ``gonkad train verify``), judges the replay
against what the worker committed on chain, and sends ``MsgSubmitVerdict``. A worker whose host serves no replay
data after ``fetch_attempts`` tries is judged invalid: its round cannot be checked.

As a worker: every VALID checkpoint of this host not yet paid (``Query/Owed``) is claimed
(``MsgClaimTrainingReward``).

A verdict or claim the chain has not recorded ``resend_s`` after CheckTx took it (it failed in its block or left
the mempool) is sent again; the chain refuses a second one, so nothing is counted twice.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from host.training.chain import TrainingChain
from host.training.config import TrainingConfig
from host.training.fetch import BundleFetcher, NotServed
from protogen.gonka.learning.v1 import learning_pb2, tx_pb2

log = logging.getLogger("gonka.host.training")
VERDICT_GAS = 300_000
CLAIM_GAS = 400_000
RESEND_S = 30.0
Key = tuple[int, int, str]
"""(run, round, worker) of a checkpoint."""


@dataclass
class TrainingCounts:
    replayed: int = 0
    verdicts_valid: int = 0
    verdicts_invalid: int = 0
    not_served: int = 0
    claims: int = 0
    errors: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def key_of(checkpoint: learning_pb2.Checkpoint) -> Key:
    return checkpoint.run_id, checkpoint.round, checkpoint.worker


class TrainingDuty:
    def __init__(
        self,
        chain: TrainingChain,
        fetcher: BundleFetcher,
        config: TrainingConfig,
        cache: Path,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chain, self.fetcher, self.config, self.cache, self.clock = chain, fetcher, config, cache, clock
        self.counts = TrainingCounts()
        self.sent: dict[Key, float] = {}
        """Verdicts and claims CheckTx took, and when: not sent again before ``RESEND_S``."""
        self.tries: dict[Key, tuple[int, float]] = {}
        """Checkpoints whose replay data was not served yet: tries so far and when to try again."""

    def step(self) -> bool:
        """Judge one assigned checkpoint, if one is due, else claim what is owed; True when more is to be done."""
        if self.config.replay:
            now = self.clock()
            for checkpoint in self.chain.assigned():
                key = key_of(checkpoint)
                if self._due(key, now) and self.tries.get(key, (0, 0.0))[1] <= now:
                    self.judge(checkpoint)
                    return True
        if self.config.claim:
            for checkpoint in self.chain.owed():
                key = key_of(checkpoint)
                if self._due(key, self.clock()):
                    claim = tx_pb2.MsgClaimTrainingReward(
                        worker=self.chain.address, run_id=checkpoint.run_id, round=checkpoint.round
                    )
                    self._send(key, claim, CLAIM_GAS)
                    self.counts.claims += 1
                    log.info("claimed run %d round %d", checkpoint.run_id, checkpoint.round)
        return False

    def judge(self, checkpoint: learning_pb2.Checkpoint) -> None:
        """Replay the checkpoint's round and send the verdict (or count a try when its data is not served)."""
        key = key_of(checkpoint)
        target = self.cache / f"run-{checkpoint.run_id}" / f"round-{checkpoint.round}" / checkpoint.worker
        try:
            name = self.fetcher.fetch(
                self.chain.urls(checkpoint.worker), checkpoint.run_id, checkpoint.round, checkpoint.worker, target
            )
        except NotServed as error:
            tries = self.tries.get(key, (0, 0.0))[0] + 1
            self.counts.not_served += 1
            if tries < self.config.fetch_attempts:
                self.tries[key] = (tries, self.clock() + self.config.poll_s)
                return
            self._verdict(checkpoint, False, f"the worker served no replay data: {error}", b"", b"")
            return
        try:
            valid, reasons, weights_hash, optimizer_hash = self._replay(checkpoint, target, name)
        finally:
            shutil.rmtree(target, ignore_errors=True)
        self.counts.replayed += 1
        self._verdict(checkpoint, valid, "; ".join(reasons), weights_hash, optimizer_hash)

    def _replay(
        self, checkpoint: learning_pb2.Checkpoint, run_dir: Path, name: str
    ) -> tuple[bool, list[str], bytes, bytes]:
        """The verdict on the worker's round in ``run_dir`` held against what it committed; torch loads here."""
        from diloco.checkpoint import RunLayout, SegmentMeta
        from diloco.pol import CheckpointRecord
        from diloco.replay import judge, replay_segment
        from mlnode.weights import weights_sha256

        meta = SegmentMeta.model_validate_json(
            (RunLayout(run_dir).segment_dir(checkpoint.round, name) / "meta.json").read_text()
        )
        before = (
            self.chain.checkpoint(checkpoint.run_id, checkpoint.round - 1, checkpoint.worker)
            if checkpoint.round
            else None
        )
        record = CheckpointRecord(
            round=checkpoint.round,
            worker_index=meta.worker_index,
            worker_name=name,
            config_hash=checkpoint.config_hash.hex(),
            start_weights_hash=checkpoint.start_weights_hash.hex(),
            start_optimizer_hash=before.optimizer_hash.hex() if before is not None else weights_sha256({}),
            data_hash=checkpoint.data_order_hash.hex(),
            weights_hash=checkpoint.weights_hash.hex(),
            optimizer_hash=checkpoint.optimizer_hash.hex(),
        )
        replay = replay_segment(run_dir, checkpoint.round, name, self.config.threads)
        verdict = judge(record, replay)
        return verdict.valid, verdict.reasons, bytes.fromhex(replay.weights_hash), bytes.fromhex(replay.optimizer_hash)

    def _verdict(
        self, checkpoint: learning_pb2.Checkpoint, valid: bool, reason: str, weights_hash: bytes, optimizer_hash: bytes
    ) -> None:
        limit = self.chain.max_reason_len()
        message = tx_pb2.MsgSubmitVerdict(
            verifier=self.chain.address,
            run_id=checkpoint.run_id,
            round=checkpoint.round,
            worker=checkpoint.worker,
            valid=valid,
            replay_weights_hash=weights_hash,
            replay_optimizer_hash=optimizer_hash,
            reason=reason.encode()[:limit].decode(errors="ignore"),
        )
        self._send(key_of(checkpoint), message, VERDICT_GAS)
        self.tries.pop(key_of(checkpoint), None)
        if valid:
            self.counts.verdicts_valid += 1
        else:
            self.counts.verdicts_invalid += 1
        log.info(
            "run %d round %d of %s: %s%s",
            checkpoint.run_id, checkpoint.round, checkpoint.worker, "valid" if valid else "INVALID",
            f" ({reason})" if reason else "",
        )  # fmt: skip

    def _due(self, key: Key, now: float) -> bool:
        sent = self.sent.get(key)
        return sent is None or now >= sent + RESEND_S

    def _send(self, key: Key, message: tx_pb2.MsgSubmitVerdict | tx_pb2.MsgClaimTrainingReward, gas: int) -> None:
        self.chain.send([message], gas)
        self.sent[key] = self.clock()
