"""Proof-of-Learning on chain: the run registered in x/learning, every worker's round committed with the
worker's own key, and replay verdicts submitted by whoever verifies.

The chain is the authority on what was committed: a verifier compares its replay with the chain's
record, not with the run directory's ``pol.jsonl``, and x/learning itself refuses a checkpoint that does
not chain from the round's agreed global weights.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from diloco import checkpoint
from diloco.checkpoint import RunLayout, RunRecord
from diloco.config import ChainSettings
from diloco.pol import CheckpointRecord, PoLSink
from diloco.replay import Replay, Verdict
from gonkad.keys.keyring import Keyring
from gonkad.txbuilder import address_of
from x.learning.client import LearningClient

log = logging.getLogger("diloco.chain")

CHAIN_FILE = "chain.json"
CHAIN_KEY = "chain"
"""Where the launcher publishes the ``ChainRun`` in the rendezvous store for the workers."""
REASON_BYTES = 256
"""x/learning's default ``max_reason_len``."""


class ChainRun(BaseModel):
    """The run as registered on chain, written next to ``run.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chain_node: str
    run_id: int
    workers: dict[str, str]
    """Worker name → the address that commits its rounds."""


def chain_file(run_dir: Path) -> Path:
    return run_dir / CHAIN_FILE


def read_chain_run(run_dir: Path) -> ChainRun | None:
    path = chain_file(run_dir)
    return ChainRun.model_validate_json(path.read_text()) if path.exists() else None


def keyring(settings: ChainSettings) -> Keyring:
    return Keyring(Path(settings.keyring_home), settings.keyring_backend)


def register_run(layout: RunLayout, run: RunRecord, settings: ChainSettings, creator: str,
                 worker_names: list[str], initial_weights_hash: str) -> ChainRun:
    """``MsgCreateTrainingRun`` for a new run; its workers are the keys named like the workers."""
    keys = keyring(settings)
    workers = {name: address_of(keys.private_key(name)) for name in worker_names}
    run_id = LearningClient(settings.chain_node).create_run(
        keys.private_key(creator), config_hash=bytes.fromhex(run.config_hash), workers=list(workers.values()),
        inner_steps=run.config.inner_steps, rounds=run.config.rounds, preset=run.config.preset,
        initial_weights_hash=bytes.fromhex(initial_weights_hash))
    registered = ChainRun(chain_node=settings.chain_node, run_id=run_id, workers=workers)
    checkpoint.write_text(chain_file(layout.root), registered.model_dump_json(indent=2) + "\n")
    return registered


class ChainSink:
    """Keeps the local sink's records and commits each round once its global state is known: x/learning
    takes the worker's record and the round's resulting global hashes in one ``MsgCommitCheckpoint``."""

    def __init__(self, local: PoLSink, settings: ChainSettings, run: ChainRun, worker_name: str) -> None:
        self.local = local
        self.client = LearningClient(settings.chain_node)
        self.key = keyring(settings).private_key(worker_name)
        self.run_id = run.run_id
        self.pending: dict[int, CheckpointRecord] = {}

    def record(self, record: CheckpointRecord) -> None:
        self.local.record(record)
        self.pending[record.round] = record

    def record_global(self, round: int, global_weights_hash: str, outer_momentum_hash: str) -> None:
        self.local.record_global(round, global_weights_hash, outer_momentum_hash)
        record = self.pending.pop(round)
        delivered = self.client.commit_checkpoint(
            self.key, self.run_id, round, start_weights_hash=bytes.fromhex(record.start_weights_hash),
            weights_hash=bytes.fromhex(record.weights_hash), optimizer_hash=bytes.fromhex(record.optimizer_hash),
            data_order_hash=bytes.fromhex(record.data_hash), config_hash=bytes.fromhex(record.config_hash),
            global_weights_hash=bytes.fromhex(global_weights_hash),
            outer_momentum_hash=bytes.fromhex(outer_momentum_hash))
        log.info("round %d committed on chain in tx %s at height %d", round, delivered.txhash, delivered.height)


def committed_record(run: ChainRun, local: CheckpointRecord) -> CheckpointRecord:
    """The local record with every hash the chain holds replaced by the chain's: what the worker really
    committed. The start optimizer state is the worker's committed state of the round before, if any."""
    client = LearningClient(run.chain_node)
    address = run.workers[local.worker_name]
    on_chain = client.checkpoint(run.run_id, local.round, address)
    start_optimizer = local.start_optimizer_hash
    if local.round > 0 and any(c["worker"] == address for c in client.checkpoints(run.run_id, local.round - 1)):
        start_optimizer = client.checkpoint(run.run_id, local.round - 1, address)["optimizer_hash"]
    return local.model_copy(update={
        "config_hash": on_chain["config_hash"], "start_weights_hash": on_chain["start_weights_hash"],
        "start_optimizer_hash": start_optimizer, "data_hash": on_chain["data_order_hash"],
        "weights_hash": on_chain["weights_hash"], "optimizer_hash": on_chain["optimizer_hash"]})


def submit_verdict(run: ChainRun, settings: ChainSettings, verifier: str, record: CheckpointRecord,
                   replay: Replay, verdict: Verdict) -> str:
    """``MsgSubmitVerdict`` for one replayed round; returns the transaction hash."""
    reason = "; ".join(verdict.reasons).encode()[:REASON_BYTES].decode(errors="ignore")
    delivered = LearningClient(run.chain_node).submit_verdict(
        keyring(settings).private_key(verifier), run.run_id, record.round, run.workers[record.worker_name],
        verdict.valid, replay_weights_hash=bytes.fromhex(replay.weights_hash),
        replay_optimizer_hash=bytes.fromhex(replay.optimizer_hash), reason=reason)
    return delivered.txhash
