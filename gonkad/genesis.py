"""Genesis files: the default app state from ``genesis/`` and CometBFT's genesis.json around it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cosmpy.protos.tendermint.types import params_pb2

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


NEW_CHAIN_CONSENSUS_PARAMS = {"abci": {"vote_extensions_enable_height": "1"}}
"""What a new chain's genesis.json sets over CometBFT's defaults: vote extensions from the first block, so every
block after it carries the validators' BLS certificate (x/bls)."""


def write_genesis(
    path: Path,
    chain_id: str,
    validators: list[dict[str, Any]],
    app_state: dict[str, Any],
    consensus_params: dict[str, Any] | None = None,
) -> None:
    """Rewrite a CometBFT genesis.json, keeping its genesis time and its consensus params with
    ``consensus_params`` merged in key by key (genesis.json's JSON: int64 values as strings, e.g.
    ``{"abci": {"vote_extensions_enable_height": "1"}}``)."""
    genesis = json.loads(path.read_text())
    if consensus_params:
        genesis["consensus_params"] = merge_overrides(genesis.get("consensus_params", {}), consensus_params)
    genesis["chain_id"] = chain_id
    genesis["initial_height"] = "1"
    genesis["validators"] = validators
    genesis["app_state"] = app_state
    path.write_text(json.dumps(genesis, indent=2) + "\n")


def comet_consensus_params(params: params_pb2.ConsensusParams) -> dict[str, Any]:
    """The params' block, evidence, validator and abci sections as CometBFT's genesis.json writes them
    (integers as strings, the evidence age in nanoseconds); the version is the node genesis' own."""
    age = params.evidence.max_age_duration
    sections = {
        "block": {"max_bytes": str(params.block.max_bytes), "max_gas": str(params.block.max_gas)},
        "evidence": {
            "max_age_num_blocks": str(params.evidence.max_age_num_blocks),
            "max_age_duration": str(age.seconds * 1_000_000_000 + age.nanos),
            "max_bytes": str(params.evidence.max_bytes),
        },
        "validator": {"pub_key_types": list(params.validator.pub_key_types)},
        "abci": {"vote_extensions_enable_height": str(params.abci.vote_extensions_enable_height)},
    }
    return {name: value for name, value in sections.items() if params.HasField(name)}


def exported_genesis(
    node_genesis: dict[str, Any],
    chain_id: str,
    height: int,
    app_state: dict[str, Any],
    consensus_params: params_pb2.ConsensusParams | None = None,
) -> dict[str, Any]:
    """CometBFT's genesis.json for a chain that goes on from ``height`` with ``app_state``: heights go on at
    ``height + 1`` (as the SDK's export writes it), no validators (InitChain returns x/stake's), the node's
    own genesis time, and its consensus params with the sections the chain's state holds at ``height``
    (``consensus_params``, which the authority may have changed since genesis, x/consensus)."""
    doc: dict[str, Any] = {
        "genesis_time": node_genesis["genesis_time"],
        "chain_id": chain_id,
        "initial_height": str(height + 1),
    }
    if "consensus_params" in node_genesis or consensus_params is not None:
        stored = {} if consensus_params is None else comet_consensus_params(consensus_params)
        doc["consensus_params"] = {**node_genesis.get("consensus_params", {}), **stored}
    return {**doc, "validators": [], "app_hash": "", "app_state": app_state}
