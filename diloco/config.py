"""Run configuration as plain data.

``TrainConfig`` is everything that decides what a run computes; its hash is in every Proof-of-Learning
record, so it holds no operational knobs. ``LaunchSettings`` and ``JoinSettings`` are those knobs
(addresses, threads, timeouts): they change how a run is carried out, never its result.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mlnode.config import PRESETS, ModelConfig, preset

WORKER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""Worker names become file names and record fields."""
DEVICE = r"^(auto|cpu|cuda(:\d+)?)$"


class TrainConfig(BaseModel):
    """The training run: model, DiLoCo schedule, inner AdamW and outer Nesterov settings, data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: str = "tiny"
    workers: int = Field(2, ge=1, le=256)
    """Workers the run starts with; also the number of data shards."""
    inner_steps: int = Field(50, ge=1)
    """H: AdamW steps each worker takes between two outer steps."""
    rounds: int = Field(10, ge=1)
    """R: outer steps in the whole run; the inner cosine schedule spans R·H steps."""
    batch_size: int = Field(8, ge=1)
    seq_len: int = Field(128, ge=2)
    inner_lr: float = Field(3e-3, gt=0)
    min_lr: float = Field(3e-4, ge=0)
    """Floor of the inner cosine schedule."""
    warmup_steps: int = Field(20, ge=0)
    weight_decay: float = Field(0.1, ge=0)
    beta1: float = Field(0.9, ge=0, lt=1)
    beta2: float = Field(0.95, ge=0, lt=1)
    grad_clip: float = Field(1.0, gt=0)
    outer_lr: float = Field(0.7, gt=0)
    outer_momentum: float = Field(0.9, ge=0, lt=1)
    compression: Literal["fp32", "fp16", "int8", "int4"] = "fp32"
    """How pseudo-gradients travel; they are always averaged in fp32."""
    int8_chunk: int = Field(4096, ge=1)
    """Elements sharing one fp32 scale in int8 and int4 compression."""
    seed: int = Field(0, ge=0)
    """Model initialisation and every data order derive from it."""
    corpus: Literal["python-docs", "stdlib"] = "python-docs"
    """python-docs: the Python documentation's prose (``diloco.prepare``); stdlib: the standard library's code."""
    corpus_bytes: int | None = Field(None, ge=4096)
    """Use only the first N bytes of the corpus (quick runs); None is the whole corpus."""
    val_every_file: int = Field(50, ge=2)
    """With the stdlib corpus: every N-th file goes to validation (python-docs is split when prepared)."""
    eval_batches: int = Field(8, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; choose one of {', '.join(PRESETS)}")
        if self.seq_len > self.architecture().max_seq_len:
            raise ValueError(
                f"seq_len {self.seq_len} exceeds the preset's max_seq_len {self.architecture().max_seq_len}"
            )
        if self.min_lr > self.inner_lr:
            raise ValueError("min_lr must not exceed inner_lr")
        return self

    def architecture(self) -> ModelConfig:
        return preset(self.preset)

    @property
    def total_inner_steps(self) -> int:
        return self.rounds * self.inner_steps


def config_hash(config: TrainConfig, corpus_sha256: str) -> str:
    """SHA-256 of the canonical JSON of the config, the model shape and the corpus: a run's identity."""
    body = {
        "config": config.model_dump(mode="json"),
        "architecture": config.architecture().model_dump(mode="json"),
        "corpus_sha256": corpus_sha256,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    startup_timeout_s: float = Field(300.0, gt=0)
    """How long round 0 waits for the configured number of workers."""
    straggler_timeout_s: float = Field(60.0, gt=0)
    """After the first worker is ready for a round, how long the others have to show up."""
    collective_timeout_s: float = Field(300.0, gt=0)
    """A collective that has not finished by then counts as failed (a peer hangs or is cut off); it must
    exceed the spread in how long workers take for their inner steps."""


class ChainSettings(BaseModel):
    """Where Proof-of-Learning records go on chain: a node's CometBFT RPC and the keyring holding this
    host's keys. A worker signs with the key named like the worker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chain_node: str = Field(pattern=r"^(https?|tcp)://")
    keyring_home: str
    keyring_backend: str = "test"


class LaunchSettings(BaseModel):
    """``gonkad train``: host the rendezvous, spawn local workers, coordinate until the last round."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: str
    resume: bool = False
    rendezvous: str = Field("127.0.0.1:0", pattern=r"^[^:\s]+:\d{1,5}$")
    """HOST:PORT the rendezvous store listens on; port 0 picks a free one."""
    local_workers: int | None = Field(None, ge=0)
    """Workers spawned here (default: all of them); the rest join with ``--join``."""
    threads: int | None = Field(None, ge=1)
    device: str = Field("auto", pattern=DEVICE)
    stop_after: int | None = Field(None, ge=1)
    """End this session after that many rounds in total; ``--resume`` continues."""
    keep_checkpoints: int | None = Field(None, ge=2)
    """Keep only the newest N checkpoints and their replay data (default: all)."""
    timeouts: Timeouts = Timeouts()
    chain: ChainSettings | None = None
    creator: str | None = None
    """With ``chain``: the key that registers a new run in x/learning."""
    budget: int | None = Field(None, ge=1)
    """With ``creator``: what the new run escrows and pays its workers (integer, the chain's learning denom)."""
    test_fault_worker: str | None = Field(None, pattern=WORKER_NAME)
    """TEST ONLY: this local worker runs with ``--test-fault wrong-data-first`` (``JoinSettings.test_fault``)."""


class JoinSettings(BaseModel):
    """``gonkad train --join HOST:PORT``: one worker process of a run coordinated elsewhere."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    join: str = Field(pattern=r"^[^:\s]+:\d{1,5}$")
    worker_name: str = Field(pattern=WORKER_NAME)
    out: str
    threads: int = Field(1, ge=1)
    device: str = Field("auto", pattern=DEVICE)
    chain: ChainSettings | None = None
    test_fault: Literal["wrong-data", "wrong-data-first"] | None = None
    """TEST ONLY: ``wrong-data`` trains each round (``wrong-data-first``: round 0 only) on another data order than
    the one it stores and commits, so those checkpoints do not follow from their data (what a verifier's replay must
    catch)."""


class VerifyRequest(BaseModel):
    """``gonkad train verify``: replay one worker's round and judge its Proof-of-Learning record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_dir: str
    round: int = Field(ge=0)
    worker: str
    threads: int | None = Field(None, ge=1)
    submit: bool = False
    verifier: str | None = None
    """With ``submit``: the key that signs the verdict."""
    chain: ChainSettings | None = None
