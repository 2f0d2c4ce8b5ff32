"""Proof-of-Learning verification: replay one worker's round from the stored state and judge its record.

``replay_segment`` loads checkpoint r's global weights, the worker's inner optimizer state at the start
of round r and its stored data order, runs the same ``inner_steps`` the worker ran, and hashes the
result. ``judge`` holds that replay against the worker's ``CheckpointRecord``:

- the stored start weights, start optimizer state and data order must hash to what the record says,
  the data order must be the one the run config prescribes for that worker and round, and the record's
  config hash must be this run's;
- in the same environment as the worker (torch version, thread count, device) the replayed weights and
  optimizer state must hash exactly to the record's;
- in another environment floating-point reductions differ, so the worker's stored end weights must hash
  to the record's and lie within ``WEIGHT_TOLERANCE`` of the replay, measured relative to how far the
  round moved the weights: ‖replayed − claimed‖ / ‖claimed − start‖.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from diloco import checkpoint
from diloco.checkpoint import RunLayout, SegmentMeta
from diloco.config import config_hash
from diloco.data import data_order, load_corpus, shard
from diloco.inner import inner_optimizer, inner_steps
from diloco.pol import CheckpointRecord, data_order_sha256
from mlnode.model import Transformer
from mlnode.threads import torch_threads
from mlnode.weights import WEIGHTS_FILE, weights_sha256

WEIGHT_TOLERANCE = 0.1
"""Honest replays of the tiny preset on 2 threads instead of 1 landed up to 0.062 away (H = 100); training
on another data order lands ~1, half the steps 0.39, no training 1.0 (README, "Measured replay
differences"). Skipping a single step (0.03–0.09) passes this test; only the exact path catches it."""


@dataclass(frozen=True)
class Replay:
    round: int
    worker_name: str
    worker_index: int
    config_hash: str
    """Of the run config and the corpus on the verifier's machine."""
    start_weights_hash: str
    start_optimizer_hash: str
    data_hash: str
    """Of the stored data order."""
    prescribed_data_hash: str
    """Of the data order the run config prescribes for this worker and round."""
    weights_hash: str
    optimizer_hash: str
    claimed_weights_hash: str | None
    """Of the worker's stored end weights, when kept."""
    weight_distance: float | None
    same_environment: bool
    environment: str


@dataclass(frozen=True)
class ReplayVerdict:
    valid: bool
    reasons: list[str]
    weight_distance: float | None


def worker_name(layout: RunLayout, round_number: int, worker: str) -> str:
    """A worker given by name or by data index, as named in round ``round_number``'s replay data."""
    folder = layout.root / "rounds" / f"{round_number:06d}"
    if (folder / worker).is_dir():
        return worker
    for meta_file in sorted(folder.glob("*/meta.json")):
        if str(SegmentMeta.model_validate_json(meta_file.read_text()).worker_index) == worker:
            return meta_file.parent.name
    raise ValueError(f"{layout.root} keeps no replay data for worker {worker!r} in round {round_number}")


def distance(
    replayed: dict[str, torch.Tensor], claimed: dict[str, torch.Tensor], start: dict[str, torch.Tensor]
) -> float:
    """‖replayed − claimed‖ / ‖claimed − start‖ over all parameters."""
    gap = sum(float((replayed[n].float() - claimed[n].float()).pow(2).sum()) for n in claimed)
    moved = sum(float((claimed[n].float() - start[n].float()).pow(2).sum()) for n in claimed)
    return (gap / moved) ** 0.5 if moved > 0 else (0.0 if gap == 0 else float("inf"))


def replay_segment(run_dir: Path, round_number: int, worker: str, threads: int | None = None) -> Replay:
    """Re-run worker ``worker``'s inner steps of round ``round_number`` on the CPU; ``threads`` defaults
    to the worker's own thread count, which is what makes an exact match possible."""
    layout = RunLayout(run_dir)
    run = layout.read_run()
    config = run.config
    name = worker_name(layout, round_number, worker)
    segment = layout.segment_dir(round_number, name)
    meta = SegmentMeta.model_validate_json((segment / "meta.json").read_text())
    corpus = load_corpus(config)
    start = checkpoint.load_tensors(layout.model_dir(round_number) / WEIGHTS_FILE)
    start_optimizer = checkpoint.load_tensors(layout.inner_file(round_number, name))
    starts = checkpoint.read_data_order(layout, round_number, name)
    data = shard(corpus, meta.worker_index, config.workers)
    model = Transformer(config.architecture())
    model.load_state_dict(start, strict=True)
    optimizer = inner_optimizer(model, config)
    checkpoint.load_inner_state(optimizer, model, start_optimizer)
    used_threads = threads or meta.threads
    with torch_threads(used_threads):
        inner_steps(model, optimizer, data, starts, config, round_number * config.inner_steps)
    replayed = {key: value.detach() for key, value in model.state_dict().items()}
    claimed_file = segment / "end_weights.safetensors"
    claimed = checkpoint.load_tensors(claimed_file) if claimed_file.exists() else None
    return Replay(
        round=round_number,
        worker_name=name,
        worker_index=meta.worker_index,
        config_hash=config_hash(config, corpus.sha256),
        start_weights_hash=weights_sha256(start),
        start_optimizer_hash=weights_sha256(start_optimizer),
        data_hash=data_order_sha256(starts),
        prescribed_data_hash=data_order_sha256(data_order(config, meta.worker_index, round_number, data.numel())),
        weights_hash=weights_sha256(replayed),
        optimizer_hash=weights_sha256(checkpoint.inner_state(optimizer, model)),
        claimed_weights_hash=weights_sha256(claimed) if claimed is not None else None,
        weight_distance=distance(replayed, claimed, start) if claimed is not None else None,
        same_environment=(meta.torch_version, meta.threads, meta.device) == (torch.__version__, used_threads, "cpu"),
        environment=f"torch {torch.__version__}, {used_threads} thread(s), cpu",
    )


def judge(record: CheckpointRecord, replay: Replay, tolerance: float = WEIGHT_TOLERANCE) -> ReplayVerdict:
    reasons = []
    if (record.round, record.worker_name, record.worker_index) != (
        replay.round,
        replay.worker_name,
        replay.worker_index,
    ):
        reasons.append(
            f"the record is for round {record.round}, worker {record.worker_name} "
            f"(index {record.worker_index}), not the replayed segment"
        )
    if record.config_hash != replay.config_hash:
        reasons.append("config_hash: the record's run config or corpus is not this run's")
    if record.start_weights_hash != replay.start_weights_hash:
        reasons.append("start_weights_hash: the stored start weights are not the ones the record names")
    if record.start_optimizer_hash != replay.start_optimizer_hash:
        reasons.append("start_optimizer_hash: the stored optimizer state is not the one the record names")
    if record.data_hash != replay.data_hash:
        reasons.append("data_hash: the stored data order is not the one the record names")
    if record.data_hash != replay.prescribed_data_hash:
        reasons.append("data_hash: the record's data order is not the one the run config prescribes")
    if replay.same_environment:
        if record.weights_hash != replay.weights_hash:
            reasons.append(f"weights_hash: replaying the round ({replay.environment}) gives other weights")
        if record.optimizer_hash != replay.optimizer_hash:
            reasons.append(f"optimizer_hash: replaying the round ({replay.environment}) gives another optimizer state")
    elif replay.claimed_weights_hash is None or replay.weight_distance is None:
        reasons.append(
            f"weights_hash: cannot be compared exactly in another environment ({replay.environment}) "
            "and the worker's end weights are not kept"
        )
    elif replay.claimed_weights_hash != record.weights_hash:
        reasons.append("weights_hash: the stored end weights are not the ones the record names")
    elif replay.weight_distance > tolerance:
        reasons.append(
            f"weights: the replay ({replay.environment}) lies {replay.weight_distance:.3g} from the "
            f"worker's weights, beyond the tolerance {tolerance:g}"
        )
    return ReplayVerdict(not reasons, reasons, replay.weight_distance)
