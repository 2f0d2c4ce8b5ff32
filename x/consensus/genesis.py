"""x/consensus genesis: none in ``app_state``; the params are genesis.json's ``consensus_params`` (InitChain),
and ``gonkad export`` writes the stored params there."""

from __future__ import annotations

from typing import Any


def init_genesis(state: dict[str, Any]) -> None:
    """A non-empty ``app_state.consensus`` is refused: params put there would be silently ignored."""
    if state:
        raise ValueError("consensus genesis takes no app_state: the params are genesis.json's consensus_params")


def export_genesis() -> dict[str, Any]:
    return {}
