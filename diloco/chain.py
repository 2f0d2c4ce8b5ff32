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
from diloco.replay import Replay, ReplayVerdict
from sdk.client.rpc import RPCError
from sdk.client.tx import TxError
from sdk.client.txbuilder import address_of
from sdk.keyring.keyring import Keyring
from x.learning.client import LearningClient

log = logging.getLogger("diloco.chain")

CHAIN_FILE = "chain.json"
CHAIN_KEY = "chain"
"""Where the launcher publishes the ``ChainRun`` in the rendezvous store for the workers."""


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


def register_run(
    layout: RunLayout,
    run: RunRecord,
    settings: ChainSettings,
    creator: str,
    worker_names: list[str],
    initial_weights_hash: str,
    budget: int,
) -> ChainRun:
    """``MsgCreateTrainingRun`` for a new run escrowing ``budget``; its workers are the keys named like the
    workers (registered hosts)."""
    keys = keyring(settings)
    workers = {name: address_of(keys.private_key(name)) for name in worker_names}
    run_id = LearningClient(settings.chain_node).create_run(
        keys.private_key(creator),
        config_hash=bytes.fromhex(run.config_hash),
        workers=list(workers.values()),
        inner_steps=run.config.inner_steps,
        rounds=run.config.rounds,
        preset=run.config.preset,
        initial_weights_hash=bytes.fromhex(initial_weights_hash),
        budget=budget,
    )
    registered = ChainRun(chain_node=settings.chain_node, run_id=run_id, workers=workers)
    checkpoint.write_text(chain_file(layout.root), registered.model_dump_json(indent=2) + "\n")
    return registered


class ChainSink:
    """Keeps the local sink's records and commits each round once its global state is known: x/learning
    takes the worker's record and the round's resulting global hashes in one ``MsgCommitCheckpoint``.

    A commit the chain does not take (node unreachable, a refusal) is logged and retried, in round order,
    after the next round: training never waits on or dies with the chain.
    """

    def __init__(self, local: PoLSink, settings: ChainSettings, run: ChainRun, worker_name: str) -> None:
        self.local = local
        self.client = LearningClient(settings.chain_node)
        self.key = keyring(settings).private_key(worker_name)
        self.run_id = run.run_id
        self.records: dict[int, CheckpointRecord] = {}
        self.ready: dict[int, tuple[CheckpointRecord, str, str]] = {}
        """Rounds whose global state is known and that are not yet on chain."""

    def record(self, record: CheckpointRecord) -> None:
        self.local.record(record)
        self.records[record.round] = record

    def record_global(self, round: int, global_weights_hash: str, outer_momentum_hash: str) -> None:
        self.local.record_global(round, global_weights_hash, outer_momentum_hash)
        record = self.records.pop(round, None)
        if record is not None:  # a round this worker did not train in has nothing of its own to commit
            self.ready[round] = (record, global_weights_hash, outer_momentum_hash)
        for pending in sorted(self.ready):
            if not self._commit(*self.ready[pending]):
                return
            del self.ready[pending]

    def _commit(self, record: CheckpointRecord, global_weights_hash: str, outer_momentum_hash: str) -> bool:
        try:
            delivered = self.client.commit_checkpoint(
                self.key,
                self.run_id,
                record.round,
                start_weights_hash=bytes.fromhex(record.start_weights_hash),
                weights_hash=bytes.fromhex(record.weights_hash),
                optimizer_hash=bytes.fromhex(record.optimizer_hash),
                data_order_hash=bytes.fromhex(record.data_hash),
                config_hash=bytes.fromhex(record.config_hash),
                global_weights_hash=bytes.fromhex(global_weights_hash),
                outer_momentum_hash=bytes.fromhex(outer_momentum_hash),
            )
        except (TxError, RPCError, OSError) as error:
            log.error("round %d not committed on chain (will retry after the next round): %s", record.round, error)
            return False
        log.info("round %d committed on chain in tx %s at height %d", record.round, delivered.txhash, delivered.height)
        return True


def worker_address(run: ChainRun, worker_name: str) -> str:
    if worker_name not in run.workers:
        raise ValueError(
            f"worker {worker_name!r} is not one of the run's registered workers ({', '.join(sorted(run.workers))})"
        )
    return run.workers[worker_name]


def committed_record(client: LearningClient, run: ChainRun, local: CheckpointRecord) -> CheckpointRecord:
    """The local record with every hash the chain holds replaced by the chain's: what the worker really
    committed. The start optimizer state is the worker's committed state of the round before, if any."""
    address = worker_address(run, local.worker_name)
    on_chain = client.checkpoint(run.run_id, local.round, address)
    before = (
        [c for c in client.checkpoints(run.run_id, local.round - 1) if c["worker"] == address]
        if local.round > 0
        else []
    )
    return local.model_copy(
        update={
            "config_hash": on_chain["config_hash"],
            "start_weights_hash": on_chain["start_weights_hash"],
            "start_optimizer_hash": before[0]["optimizer_hash"] if before else local.start_optimizer_hash,
            "data_hash": on_chain["data_order_hash"],
            "weights_hash": on_chain["weights_hash"],
            "optimizer_hash": on_chain["optimizer_hash"],
        }
    )


def submit_verdict(
    client: LearningClient,
    run: ChainRun,
    settings: ChainSettings,
    verifier: str,
    record: CheckpointRecord,
    replay: Replay,
    verdict: ReplayVerdict,
) -> str:
    """``MsgSubmitVerdict`` for one replayed round, its reasons cut to the chain's ``max_reason_len``;
    returns the transaction hash."""
    limit = int(client.params()["max_reason_len"])
    reason = "; ".join(verdict.reasons).encode()[:limit].decode(errors="ignore")
    delivered = client.submit_verdict(
        keyring(settings).private_key(verifier),
        run.run_id,
        record.round,
        worker_address(run, record.worker_name),
        verdict.valid,
        replay_weights_hash=bytes.fromhex(replay.weights_hash),
        replay_optimizer_hash=bytes.fromhex(replay.optimizer_hash),
        reason=reason,
    )
    return delivered.txhash
