"""One round of one worker as a replay needs it: the files of a run directory (``diloco/checkpoint.py``) that
``diloco.replay.replay_segment`` reads, under flat names so they travel over HTTP one by one and land in the
same places of a verifier's copy of the run directory.

Nothing in it is trusted: the replay hashes the start weights, start optimizer state and data order and holds
them, and its result, against what the worker committed on chain."""

from __future__ import annotations

from pathlib import Path

from diloco.checkpoint import RunLayout
from mlnode.weights import CONFIG_FILE, WEIGHTS_FILE

FILES = (
    "run.json",
    "start_config.json",
    "start_weights.safetensors",
    "start_optimizer.safetensors",
    "meta.json",
    "data_order.json",
    "end_weights.safetensors",
)


def bundle_paths(layout: RunLayout, round_number: int, name: str) -> dict[str, Path]:
    """Each flat name's place in the run directory ``layout`` for worker ``name``'s round ``round_number``."""
    segment = layout.segment_dir(round_number, name)
    places = (
        layout.run_file,
        layout.model_dir(round_number) / CONFIG_FILE,
        layout.model_dir(round_number) / WEIGHTS_FILE,
        layout.inner_file(round_number, name),
        segment / "meta.json",
        segment / "data_order.json",
        segment / "end_weights.safetensors",
    )
    return dict(zip(FILES, places, strict=True))
