"""A run directory: the run's identity, global checkpoints, inner optimizer states and replay data.

Checkpoint n is the state after n outer steps, which round n starts from. Every file is written under a
temporary name and renamed, and ``checkpoint.json`` is written after the global files, so a reader never
sees half a file. Layout (``diloco/README.md`` has the details)::

    run.json                                   RunRecord
    checkpoints/000004/model/                  config.json + model.safetensors (gonkad mlnode start --model)
    checkpoints/000004/outer.safetensors       outer Nesterov momentum, by parameter name
    checkpoints/000004/workers/NAME.safetensors that worker's inner AdamW state at the start of round 4
    checkpoints/000004/checkpoint.json         CheckpointInfo
    rounds/000004/NAME/data_order.json         the worker's window starts for round 4
    rounds/000004/NAME/end_weights.safetensors its weights after its inner steps
    rounds/000004/NAME/meta.json               SegmentMeta
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict
from safetensors.torch import load_file, save_file

from diloco.config import TrainConfig
from mlnode.model import Transformer
from mlnode.weights import WEIGHTS_FILE, save_model


class RunRecord(BaseModel):
    """``run.json``: what a run computes. Written once when the run is created."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    config_hash: str
    config: TrainConfig
    corpus_sha256: str
    corpus_files: int


class CheckpointInfo(BaseModel):
    """``checkpoint.json``: written last; its presence marks the global files complete."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checkpoint: int
    """Outer steps applied; round ``checkpoint`` starts here."""
    step: int
    """Inner steps per worker so far (checkpoint · H)."""
    run_id: str
    config_hash: str
    weights_sha256: str
    momentum_sha256: str
    workers: dict[str, int]
    """Name → data index of the workers whose inner state belongs to this checkpoint."""


class SegmentMeta(BaseModel):
    """``meta.json`` of one worker's round: what a replay needs besides the tensors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    round: int
    worker_name: str
    worker_index: int
    torch_version: str
    threads: int
    device: str


@dataclass(frozen=True)
class RunLayout:
    root: Path

    @property
    def run_file(self) -> Path:
        return self.root / "run.json"

    @property
    def metrics_file(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def pol_file(self) -> Path:
        return self.root / "pol.jsonl"

    @property
    def plot_file(self) -> Path:
        return self.root / "loss.png"

    def log_file(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def checkpoint_dir(self, n: int) -> Path:
        return self.root / "checkpoints" / f"{n:06d}"

    def model_dir(self, n: int) -> Path:
        return self.checkpoint_dir(n) / "model"

    def outer_file(self, n: int) -> Path:
        return self.checkpoint_dir(n) / "outer.safetensors"

    def inner_file(self, n: int, name: str) -> Path:
        return self.checkpoint_dir(n) / "workers" / f"{name}.safetensors"

    def info_file(self, n: int) -> Path:
        return self.checkpoint_dir(n) / "checkpoint.json"

    def segment_dir(self, round_number: int, name: str) -> Path:
        return self.root / "rounds" / f"{round_number:06d}" / name

    def read_run(self) -> RunRecord:
        return RunRecord.model_validate_json(self.run_file.read_text())

    def read_info(self, n: int) -> CheckpointInfo:
        return CheckpointInfo.model_validate_json(self.info_file(n).read_text())


def _temporary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def write_text(path: Path, text: str) -> None:
    temporary = _temporary(path)
    temporary.write_text(text)
    os.replace(temporary, path)


def save_tensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    temporary = _temporary(path)
    save_file({name: tensor.detach().contiguous().cpu() for name, tensor in tensors.items()}, str(temporary))
    os.replace(temporary, path)


def load_tensors(path: Path) -> dict[str, torch.Tensor]:
    return load_file(str(path))


def inner_state(optimizer: torch.optim.Optimizer, model: Transformer) -> dict[str, torch.Tensor]:
    """The optimizer's per-parameter state as ``<param>.<key>`` tensors (AdamW: step, exp_avg, exp_avg_sq)."""
    tensors = {}
    for name, param in model.named_parameters():
        for key, value in optimizer.state.get(param, {}).items():
            tensors[f"{name}.{key}"] = value.detach() if isinstance(value, torch.Tensor) else torch.tensor(value)
    return tensors


def load_inner_state(optimizer: torch.optim.Optimizer, model: Transformer, tensors: dict[str, torch.Tensor]) -> None:
    params = dict(model.named_parameters())
    optimizer.state.clear()
    for full_name, value in tensors.items():
        name, key = full_name.rsplit(".", 1)
        if name not in params:
            raise ValueError(f"optimizer state names an unknown parameter {name!r}")
        param = params[name]
        optimizer.state[param][key] = value.clone() if key == "step" else value.to(param.device).clone()


def write_global(
    layout: RunLayout, info: CheckpointInfo, model: Transformer, momentum: dict[str, torch.Tensor], config: TrainConfig
) -> None:
    """Checkpoint ``info.checkpoint``'s global files; ``model`` holds the global weights."""
    n = info.checkpoint
    staging = _temporary(layout.model_dir(n))
    save_model(
        model,
        staging,
        f"diloco-{config.preset}-{info.run_id[:8]}-{n:06d}",
        {
            "diloco": {
                "run_id": info.run_id,
                "checkpoint": n,
                "step": info.step,
                "config_hash": info.config_hash,
                "train_config": config.model_dump(mode="json"),
            }
        },
    )
    shutil.rmtree(layout.model_dir(n), ignore_errors=True)
    os.replace(staging, layout.model_dir(n))
    save_tensors(layout.outer_file(n), momentum)
    write_text(layout.info_file(n), info.model_dump_json(indent=2) + "\n")


def read_global(layout: RunLayout, n: int) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Checkpoint n's global weights and outer momentum."""
    return load_tensors(layout.model_dir(n) / WEIGHTS_FILE), load_tensors(layout.outer_file(n))


def latest_complete(layout: RunLayout, local: set[str]) -> CheckpointInfo | None:
    """The newest checkpoint whose global files are on disk, with the inner state of each of its workers
    that writes into this directory (``local``); workers on other hosts keep theirs in their own."""
    root = layout.root / "checkpoints"
    numbers = sorted((int(p.name) for p in root.iterdir() if p.name.isdigit()), reverse=True) if root.exists() else []
    for n in numbers:
        if layout.info_file(n).exists():
            info = layout.read_info(n)
            if all(layout.inner_file(n, name).exists() for name in local & set(info.workers)):
                return info
    return None


def write_segment(
    layout: RunLayout, meta: SegmentMeta, starts: torch.Tensor, end_weights: dict[str, torch.Tensor]
) -> None:
    folder = layout.segment_dir(meta.round, meta.worker_name)
    write_text(folder / "data_order.json", json.dumps({"window_starts": starts.tolist()}) + "\n")
    save_tensors(folder / "end_weights.safetensors", end_weights)
    write_text(folder / "meta.json", meta.model_dump_json(indent=2) + "\n")


def read_data_order(layout: RunLayout, round_number: int, name: str) -> torch.Tensor:
    body = json.loads((layout.segment_dir(round_number, name) / "data_order.json").read_text())
    return torch.tensor(body["window_starts"], dtype=torch.int64)


def prune(layout: RunLayout, newest: int, keep: int) -> None:
    """Drop checkpoints and replay data older than the newest ``keep`` checkpoints."""
    for n in range(max(0, newest - keep + 1)):
        shutil.rmtree(layout.checkpoint_dir(n), ignore_errors=True)
        shutil.rmtree(layout.root / "rounds" / f"{n:06d}", ignore_errors=True)
