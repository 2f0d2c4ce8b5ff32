"""One round of one worker as a replay needs it, on the wire: the files of a run directory (as ``gonkad train``
lays it out, ``diloco/checkpoint.py``) that ``gonkad train verify`` reads, under flat names, so they travel over
HTTP one by one and land in the same places of a verifier's copy of the run directory.

Nothing in it is trusted: the replay hashes the start weights, start optimizer state and data order and holds
them, and its result, against what the worker committed on chain."""

from __future__ import annotations

import re
from pathlib import Path

FILES = (
    "run.json",
    "start_config.json",
    "start_weights.safetensors",
    "start_optimizer.safetensors",
    "meta.json",
    "data_order.json",
    "end_weights.safetensors",
)
WORKER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
"""A worker's name in a run directory, as ``gonkad train`` takes it (nothing a path could escape with)."""
CHAIN_FILE = "chain.json"
"""Beside ``run.json``: the chain run (``run_id``) and its ``workers`` (name → address), as ``gonkad train`` writes
it for a run registered on chain."""
POL_FILE = "pol.jsonl"


def bundle_paths(root: Path, round_number: int, name: str) -> dict[str, Path]:
    """Each flat name's place in the run directory ``root`` for worker ``name``'s round ``round_number``."""
    checkpoint = root / "checkpoints" / f"{round_number:06d}"
    segment = root / "rounds" / f"{round_number:06d}" / name
    places = (
        root / "run.json",
        checkpoint / "model" / "config.json",
        checkpoint / "model" / "model.safetensors",
        checkpoint / "workers" / f"{name}.safetensors",
        segment / "meta.json",
        segment / "data_order.json",
        segment / "end_weights.safetensors",
    )
    return dict(zip(FILES, places, strict=True))
