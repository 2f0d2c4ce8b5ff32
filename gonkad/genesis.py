"""Genesis files: the default app state from ``genesis/`` and CometBFT's genesis.json around it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gonkad.paths import PROJECT_ROOT

DEFAULT_APP_STATE = PROJECT_ROOT / "genesis" / "default_app_state.json"


def default_app_state() -> dict[str, Any]:
    return json.loads(DEFAULT_APP_STATE.read_text())


def merge_overrides(app_state: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``app_state`` with ``overrides`` merged in key by key (nested tables merge, other values replace)."""
    merged = copy.deepcopy(app_state)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_overrides(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def add_genesis_account(app_state: dict[str, Any], address: str, coins: list[tuple[str, int]]) -> dict[str, Any]:
    """A funded account: listed in auth and credited in bank (supply follows from balances)."""
    state = copy.deepcopy(app_state)
    state["auth"]["accounts"].append({"@type": "/cosmos.auth.v1beta1.BaseAccount", "address": address})
    state["bank"]["balances"].append(
        {"address": address, "coins": [{"denom": d, "amount": str(a)} for d, a in sorted(coins)]}
    )
    return state


def write_genesis(path: Path, chain_id: str, validators: list[dict[str, Any]], app_state: dict[str, Any]) -> None:
    """Rewrite a CometBFT genesis.json, keeping its consensus params and genesis time."""
    genesis = json.loads(path.read_text())
    genesis["chain_id"] = chain_id
    genesis["initial_height"] = "1"
    genesis["validators"] = validators
    genesis["app_state"] = app_state
    path.write_text(json.dumps(genesis, indent=2) + "\n")
