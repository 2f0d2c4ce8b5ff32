"""An ML node process: build the backend the settings name, measure the host, serve until stopped.

Once the socket accepts connections the node prints one JSON line, ``{"url": ...}``, so a supervisor
can wait for it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import torch
import uvicorn
from fastapi import APIRouter

from mlnode import nodeinfo
from mlnode.backend import Backend
from mlnode.hf import is_hf_directory, load_hf_model
from mlnode.limits import body_limit
from mlnode.local import LocalBackend
from mlnode.server import create_app
from mlnode.settings import NodeSettings
from mlnode.upstream import UpstreamBackend
from mlnode.verify_chat import verify_router
from mlnode.vocabulary import BYTES
from mlnode.weights import LoadedModel, load_model, random_model


@dataclass(frozen=True)
class Built:
    """What the settings build, and what the app around it needs to know of it."""

    backend: Backend
    device: torch.device
    """Whose memory the node publishes: the local model's, or an upstream's host accelerator."""
    routers: list[APIRouter]
    """Routes only a local model can serve (verification by re-execution)."""
    context: int | None
    """The model's context in tokens; unknown for an upstream."""


def load_directory(directory: Path) -> LoadedModel:
    """A model directory: a Hugging Face one, or ours (``config.json`` + ``model.safetensors``)."""
    return load_hf_model(directory) if is_hf_directory(directory) else load_model(directory)


def build_backend(settings: NodeSettings) -> Built:
    """The local model (loaded, moved to its device) or the upstream adapter the settings name."""
    if settings.upstream is not None:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        backend = UpstreamBackend(settings.upstream, settings.max_concurrency, settings.max_queue, settings.model)
        return Built(backend, device, [], None)
    loaded = (
        random_model(str(settings.preset), settings.seed or 0)
        if settings.model is None
        else load_directory(Path(settings.model))
    )
    if settings.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {settings.device}: torch sees no CUDA device on this host")
    loaded.model.to(("cuda" if torch.cuda.is_available() else "cpu") if settings.device == "auto" else settings.device)
    device = loaded.model.output.weight.device
    threads = settings.threads or (max(1, (os.cpu_count() or 1) - 1) if device.type == "cpu" else None)
    backend = LocalBackend(loaded, settings.max_concurrency, settings.max_queue, settings.max_tokens_limit, threads)
    # Verification replays our own chat template and byte tokens; a Hugging Face model is served without it.
    routers = [verify_router(loaded)] if loaded.vocabulary is BYTES else []
    return Built(backend, device, routers, loaded.config.max_seq_len)


class ReadyServer(uvicorn.Server):
    """Prints the ready line once the listening socket is served."""

    def __init__(self, config: uvicorn.Config, ready_line: str) -> None:
        super().__init__(config)
        self.ready_line = ready_line

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.ready_line, flush=True)


def run(settings: NodeSettings) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    built = build_backend(settings)
    app = create_app(
        built.backend,
        nodeinfo.measure(built.device),
        built.routers,
        settings.max_body_bytes or body_limit(built.context),
        settings.race_preset,
    )
    listener = socket.create_server((settings.host, settings.port))
    url = f"http://{settings.host}:{listener.getsockname()[1]}"
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
    ReadyServer(config, json.dumps({"url": url})).run(sockets=[listener])
