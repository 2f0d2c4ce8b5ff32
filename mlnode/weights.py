"""Model files: ``config.json`` + ``model.safetensors`` in one directory, and model identity.

A model's identity is its name plus the SHA-256 of its canonical weight bytes: every tensor in sorted
name order, each as ``name | dtype | shape | little-endian contiguous bytes``. Two nodes serving the
same identity serve the same function, whatever file layout they loaded it from.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from mlnode.config import ModelConfig, preset
from mlnode.model import Transformer
from mlnode.vocabulary import BYTES, Vocabulary

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def weights_sha256(state: dict[str, torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name].detach().contiguous().cpu()
        header = f"{name}|{str(tensor.dtype).removeprefix('torch.')}|{','.join(map(str, tensor.shape))}|"
        digest.update(struct.pack("<I", len(header)) + header.encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


@dataclass
class LoadedModel:
    name: str
    config: ModelConfig
    model: Transformer
    sha256: str
    vocabulary: Vocabulary = BYTES
    """How prompts and answers map to ids: our bytes, or the model directory's own tokenizer."""

    @property
    def identity(self) -> str:
        return f"{self.name}@sha256:{self.sha256}"


def finish(name: str, model: Transformer, sha256: str | None = None) -> LoadedModel:
    """Freeze ``model`` for inference; its identity is ``sha256`` when given (the stored tensors' hash)
    or else that of its own state."""
    model.eval()
    for param in model.parameters():
        param.requires_grad_(False)
    return LoadedModel(name, model.config, model, sha256 or weights_sha256(model.state_dict()))


def random_model(preset_name: str, seed: int) -> LoadedModel:
    """A seeded random initialisation: a valid model for tests, named ``<preset>-seed<seed>``."""
    model = Transformer(preset(preset_name)).init_weights(seed)
    return finish(f"{preset_name}-seed{seed}", model)


def save_model(model: Transformer, directory: Path, name: str, metadata: dict[str, object] | None = None) -> str:
    """Write the model directory; returns the weights' SHA-256."""
    directory.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    sha = weights_sha256(state)
    save_file(state, str(directory / WEIGHTS_FILE), metadata={"name": name, "sha256": sha})
    body = {"name": name, "sha256": sha, "config": model.config.model_dump(), **(metadata or {})}
    (directory / CONFIG_FILE).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return sha


def load_model(directory: Path) -> LoadedModel:
    """Load a model directory; the recorded SHA-256, if any, must match the weights."""
    body = json.loads((directory / CONFIG_FILE).read_text())
    config = ModelConfig.model_validate(body["config"])
    model = Transformer(config)
    state = load_file(str(directory / WEIGHTS_FILE))
    model.load_state_dict(state, strict=True)
    loaded = finish(str(body.get("name") or directory.name), model)
    if body.get("sha256") and body["sha256"] != loaded.sha256:
        raise ValueError(f"{directory}: weights hash {loaded.sha256} does not match config.json {body['sha256']}")
    return loaded
