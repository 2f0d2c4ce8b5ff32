"""Proof-of-Learning records: what each worker commits to at every outer step, and where it goes.

Every hash is ``mlnode.weights.weights_sha256`` of a name → tensor map (sorted names, each as
``name|dtype|shape|`` plus little-endian bytes), so weights, optimizer state, momentum and data order
are all hashed one way:

- weights: the model's state dict (``tok_embeddings.weight``, ``layers.0.attention.wq.weight``, ...);
- inner optimizer state: ``<param>.exp_avg``, ``<param>.exp_avg_sq`` and ``<param>.step`` per parameter
  (an optimizer that has not stepped yet is the empty map);
- outer momentum: the momentum buffer under each parameter's name;
- data order: ``{"window_starts": int64 [inner_steps, batch_size]}``.

A sink receives the records; the default appends them to ``pol.jsonl``. A chain sink implements the same
two methods.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Protocol

import torch
from pydantic import BaseModel, ConfigDict, Field

from mlnode.weights import weights_sha256

HEX64 = r"^[0-9a-f]{64}$"


class CheckpointRecord(BaseModel):
    """One worker's commitment for one round, made after its inner steps and before the exchange."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    round: int = Field(ge=0)
    """Run-local round number: the round that started from checkpoint ``round``."""
    worker_index: int = Field(ge=0)
    """Data index: which shard and which data order the worker had to use."""
    worker_name: str
    """The worker's identity (its key name when records go on chain)."""
    config_hash: str = Field(pattern=HEX64)
    start_weights_hash: str = Field(pattern=HEX64)
    """The global weights the round started from (checkpoint ``round``)."""
    start_optimizer_hash: str = Field(pattern=HEX64)
    """The worker's inner optimizer state at the round's start."""
    data_hash: str = Field(pattern=HEX64)
    weights_hash: str = Field(pattern=HEX64)
    """The worker's weights after its inner steps."""
    optimizer_hash: str = Field(pattern=HEX64)
    """The worker's inner optimizer state after its inner steps."""


class PoLSink(Protocol):
    """One per worker. ``record`` comes after the worker's inner steps and before the exchange;
    ``record_global`` after the committed outer step of the same round, on every member (each applies the
    same step, so each can attest the result)."""

    def record(self, record: CheckpointRecord) -> None:
        """The worker's commitment for one round."""

    def record_global(self, round: int, global_weights_hash: str, outer_momentum_hash: str) -> None:
        """The global state after round ``round``'s outer step (checkpoint ``round + 1``)."""


class JsonlSink:
    """Appends one JSON object a line; the workers of a run may share the file."""

    def __init__(self, path: Path, worker_name: str) -> None:
        self.path = path
        self.worker_name = worker_name

    def record(self, record: CheckpointRecord) -> None:
        self._append({"kind": "worker", **record.model_dump()})

    def record_global(self, round: int, global_weights_hash: str, outer_momentum_hash: str) -> None:
        self._append(
            {
                "kind": "global",
                "round": round,
                "worker_name": self.worker_name,
                "global_weights_hash": global_weights_hash,
                "outer_momentum_hash": outer_momentum_hash,
            }
        )

    def _append(self, body: dict[str, object]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(json.dumps(body, sort_keys=True) + "\n")


def find_record(path: Path, round_number: int, worker: str) -> CheckpointRecord:
    """The last record a JSONL sink holds for (round, worker name or index)."""
    found = None
    for line in path.read_text().splitlines():
        body = json.loads(line)
        if (
            body.pop("kind") == "worker"
            and body["round"] == round_number
            and worker in (body["worker_name"], str(body["worker_index"]))
        ):
            found = CheckpointRecord.model_validate(body)
    if found is None:
        raise ValueError(f"{path} holds no record for round {round_number}, worker {worker}")
    return found


def data_order_sha256(starts: torch.Tensor) -> str:
    return weights_sha256({"window_starts": starts.to(torch.int64)})
