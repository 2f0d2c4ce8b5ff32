"""``TrainingDuty``: a host's part in training runs on the network (host/README.md, "Training duties").

As a verifier: x/learning draws hosts to replay a worker's round when its checkpoint is committed
(``Query/Assigned``). For each such checkpoint the duty fetches the round's replay data from the worker's host
(``fetch.py``), replays the round with ``gonkad train verify`` (a child process: the host program does not load
torch) held against what the worker committed on chain, and sends ``MsgSubmitVerdict``. A worker whose host serves
no replay data after ``fetch_attempts`` tries, or data that does not replay, is judged invalid: its round cannot be
checked.

As a worker: every VALID checkpoint of this host not yet paid (``Query/Owed``) is claimed
(``MsgClaimTrainingReward``).

A verdict or claim the chain has not recorded ``RESEND_S`` after CheckTx took it (it failed in its block or left
the mempool) is sent again; the chain refuses a second one, so nothing is counted twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from host.training.bundle import POL_FILE, bundle_paths
from host.training.chain import TrainingChain
from host.training.config import TrainingConfig
from host.training.counts import TrainingCounts
from host.training.fetch import BundleFetcher, NotServed
from protogen.gonka.learning.v1 import learning_pb2, tx_pb2

log = logging.getLogger("gonka.host.training")
VERDICT_GAS = 300_000
CLAIM_GAS = 400_000
RESEND_S = 30.0
EMPTY_STATE_SHA256 = hashlib.sha256(b"").hexdigest()
"""A worker's inner optimizer state before its first committed round: the empty map's hash (``weights_sha256({})``:
no tensors, no bytes)."""
Key = tuple[int, int, str]
"""(run, round, worker) of a checkpoint."""


class ReplayFailed(Exception):
    """``gonkad train verify`` could not replay the fetched data (its one-line error)."""


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
        """Replay the checkpoint's round and send the verdict (or count a try that found nothing to replay)."""
        target = self.cache / f"run-{checkpoint.run_id}" / f"round-{checkpoint.round}" / checkpoint.worker
        try:
            name = self.fetcher.fetch(
                self.chain.urls(checkpoint.worker), checkpoint.run_id, checkpoint.round, checkpoint.worker, target
            )
            valid, reason, weights_hash, optimizer_hash = self._replay(checkpoint, target, name)
        except (NotServed, ReplayFailed) as error:
            self._failed(checkpoint, error)
            return
        finally:
            shutil.rmtree(target, ignore_errors=True)
        self.counts.replayed += 1
        self._verdict(checkpoint, valid, reason, weights_hash, optimizer_hash)

    def _failed(self, checkpoint: learning_pb2.Checkpoint, error: Exception) -> None:
        """A try that found no replay data, or data that does not replay: tried again ``poll_s`` later, and judged
        invalid at the last of ``fetch_attempts`` tries (the worker's round cannot be checked)."""
        key = key_of(checkpoint)
        tries = self.tries.get(key, (0, 0.0))[0] + 1
        if isinstance(error, NotServed):
            self.counts.not_served += 1
        else:
            self.counts.not_replayed += 1
        log.info(
            "run %d round %d of %s, try %d: %s", checkpoint.run_id, checkpoint.round, checkpoint.worker, tries, error
        )
        if tries < self.config.fetch_attempts:
            self.tries[key] = (tries, self.clock() + self.config.poll_s)
            return
        what = "served no replay data" if isinstance(error, NotServed) else "served replay data that does not replay"
        self._verdict(checkpoint, False, f"the worker {what}: {error}", b"", b"")

    def _replay(self, checkpoint: learning_pb2.Checkpoint, run_dir: Path, name: str) -> tuple[bool, str, bytes, bytes]:
        """``gonkad train verify`` on the worker's round in ``run_dir``, held against what the worker committed on
        chain (written as the run directory's only PoL record): the verdict, its reasons and the replay's hashes."""
        meta = json.loads(bundle_paths(run_dir, checkpoint.round, name)["meta.json"].read_text())
        before = (
            self.chain.checkpoint(checkpoint.run_id, checkpoint.round - 1, checkpoint.worker)
            if checkpoint.round
            else None
        )
        record = {
            "kind": "worker",
            "round": checkpoint.round,
            "worker_index": meta["worker_index"],
            "worker_name": name,
            "config_hash": checkpoint.config_hash.hex(),
            "start_weights_hash": checkpoint.start_weights_hash.hex(),
            "start_optimizer_hash": before.optimizer_hash.hex() if before is not None else EMPTY_STATE_SHA256,
            "data_hash": checkpoint.data_order_hash.hex(),
            "weights_hash": checkpoint.weights_hash.hex(),
            "optimizer_hash": checkpoint.optimizer_hash.hex(),
        }
        (run_dir / POL_FILE).write_text(json.dumps(record) + "\n")
        threads = ["--threads", str(self.config.threads)] if self.config.threads else []
        command = [
            sys.executable,
            "-m",
            "gonkad",
            "train",
            "verify",
            str(run_dir),
            str(checkpoint.round),
            name,
            *threads,
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=self.config.replay_timeout_s, check=False
        )
        if done.returncode != 0:
            raise ReplayFailed((done.stderr.strip().splitlines() or ["no output"])[-1])
        verdict = json.loads(done.stdout.strip().splitlines()[-1])
        return (
            bool(verdict["valid"]),
            "; ".join(verdict["reasons"]),
            bytes.fromhex(verdict["replay_weights_hash"]),
            bytes.fromhex(verdict["replay_optimizer_hash"]),
        )

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
