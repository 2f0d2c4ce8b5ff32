"""The host program's own settings file, ``HOME/host.toml`` (``gonkad executor start --home HOME``): ``[models]``,
publishing the store and fetching registered models, and ``[training]`` (``host.training.config``), its part in
training runs (``host/README.md``).

    [models]
    fetch = true            # fetch, load and serve models registered with a source_url (default false)
    publish = true          # serve the store's models at GET /models/<sha256>/… (default true)
    store = "models"        # the store, relative to HOME (default "models")
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from host.training.config import TrainingConfig

HOST_TOML = "host.toml"


class ModelsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fetch: bool = False
    """Opt in: every model the chain registers with a ``source_url`` this host does not hold is downloaded, checked,
    loaded in an ML node of its own and registered as one of this host's nodes."""
    publish: bool = True
    """Serve what the store holds (published with ``gonkad models publish``, or fetched) to other hosts."""
    store: str = "models"
    """The store's directory; relative paths are under the host's home."""
    poll_s: float = Field(5.0, gt=0)
    """How often the registry is read for new models."""
    max_model_bytes: int = Field(64 << 30, ge=1)
    """A model larger than this (by its manifest) is refused."""
    download_timeout_s: float = Field(60.0, gt=0)
    """The longest wait for a source's next bytes."""
    threads: int = Field(1, ge=1)
    """Torch threads of each fetched model's ML node."""
    max_concurrency: int = Field(4, ge=1)
    """Each fetched model's ML node's batch slots, registered on chain with its node."""
    max_tokens_limit: int = Field(256, ge=1)
    start_timeout_s: float = Field(120.0, gt=0)
    """How long a fetched model's ML node may take to load and serve."""


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    models: ModelsConfig = Field(default_factory=ModelsConfig)
    training: TrainingConfig = Field(default_factory=TrainingConfig)


def load_host_config(home: Path) -> HostConfig:
    """``HOME/host.toml``, or the defaults when there is none."""
    path = home / HOST_TOML
    if not path.exists():
        return HostConfig()
    with path.open("rb") as f:
        return HostConfig.model_validate(tomllib.load(f))


def store_root(home: Path, config: ModelsConfig) -> Path:
    return home / config.store
