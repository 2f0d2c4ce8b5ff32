"""``gonkad models publish SOURCE --home H --url URL``: put a model in a host's store, which its executor proxy
serves (``host/README.md``, "Models: publishing and fetching"), and print what a ``MsgRegisterModel`` names.

SOURCE is a model directory (ours or Hugging Face), or a DiLoCo run directory (``gonkad train --out``), whose
newest complete checkpoint's global weights (``checkpoints/N/model``, an ML-node model directory) are published.
The directory is loaded as the ML node loads it, so what is printed is the identity a node serves it under:

    {"model": "NAME@sha256:HEX", "name", "weights_sha256", "context_length", "source_url": "URL/models/HEX",
     "directory"}

URL is the executor's base URL as other hosts reach it (``gonkad executor start`` prints it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sdk.cli.flags import DEFAULT_HOME


def final_model(source: Path) -> Path:
    """The model directory SOURCE names: itself, or a training run's newest complete checkpoint's model."""
    if not (source / "run.json").exists():
        return source
    from diloco.checkpoint import RunLayout, latest_complete  # torch loads for this command only

    layout = RunLayout(source)
    info = latest_complete(layout, set())
    if info is None:
        raise ValueError(f"{source}: the run has no complete checkpoint yet")
    return layout.model_dir(info.checkpoint)


def publish(source: Path, home: Path, url: str) -> dict[str, Any]:
    """Publish SOURCE's model in ``home``'s store; what ``publish`` prints."""
    from host.models import ModelStore, load_host_config, store_root
    from mlnode.node import load_directory

    directory = final_model(source)
    loaded = load_directory(directory)
    store = ModelStore(store_root(home, load_host_config(home).models))
    store.add(directory, loaded.name, loaded.sha256)
    return {
        "model": loaded.identity,
        "name": loaded.name,
        "weights_sha256": loaded.sha256,
        "context_length": loaded.config.max_seq_len,
        "source_url": f"{url.rstrip('/')}/models/{loaded.sha256}",
        "directory": str(store.directory(loaded.sha256)),
    }


def cmd_publish(args: argparse.Namespace) -> None:
    from gonkad.cmd.serve import check_url

    url = check_url(args.url, "--url", ("http", "https"))
    source = Path(args.source)
    if not source.is_dir():
        raise ValueError(f"{source} is not a directory")
    print(json.dumps(publish(source, Path(args.home), url)))


def register(sub: argparse._SubParsersAction) -> None:
    models = sub.add_parser("models", help="a host's published models").add_subparsers(
        dest="models_command", required=True
    )
    p = models.add_parser(
        "publish", help="put a model directory, or a training run's final weights, in a host's store; prints its id"
    )
    p.add_argument("source", help="a model directory, or a DiLoCo run directory (its newest checkpoint)")
    p.add_argument("--home", default=str(DEFAULT_HOME), help="the host's executor home (its store: host.toml)")
    p.add_argument("--url", required=True, help="the host's executor base URL, as other hosts reach it")
    p.set_defaults(func=cmd_publish)
