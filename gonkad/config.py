"""Node configuration: gonkad's own ``app.toml`` (pydantic) and edits to CometBFT's ``config.toml``."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gonkad.paths import snapshot_dir
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT
from sdk.snapshots.format import CHUNK_BYTES
from sdk.snapshots.store import SnapshotStore

APP_TOML = "app.toml"


class TelemetryConfig(BaseModel):
    """``[telemetry]``: the node's Prometheus metrics (sdk/telemetry), as the Cosmos SDK's ``enabled`` switch
    and CometBFT's ``prometheus_listen_addr``; off unless enabled."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    prometheus_listen_addr: str = Field(
        default="127.0.0.1:26661",
        description="host:port of the metrics HTTP endpoint (path /metrics); port 0 picks a free one",
    )


class ApiConfig(BaseModel):
    """app.toml's ``[api]``: the REST API (the Cosmos SDK's gRPC gateway routes, sdk/rest), off by default as
    in the SDK."""

    model_config = ConfigDict(extra="forbid")

    enable: bool = False
    address: str = "tcp://127.0.0.1:1317"
    max_body_bytes: int = Field(
        default=10 * 1024 * 1024, gt=0, description="larger request bodies are refused (413) unread"
    )


class StateSyncConfig(BaseModel):
    """``[state_sync]``: the snapshots this node takes for peers that join by state sync (sdk/snapshots), as the
    Cosmos SDK's ``snapshot-interval`` and ``snapshot-keep-recent``; none are taken unless an interval is set."""

    model_config = ConfigDict(extra="forbid")

    snapshot_interval: int = Field(
        default=0, ge=0, description="heights that are multiples of it get a snapshot (data/snapshots/); 0 = off"
    )
    snapshot_keep_recent: int = Field(default=2, ge=1, description="snapshots kept; older ones are deleted")
    snapshot_chunk_bytes: int = Field(
        default=CHUNK_BYTES,
        ge=1024,
        description="payload limit of a chunk; keep the default: peers pool a snapshot only if its hash is the same",
    )
    test_fault: Literal["", "tamper-chunks"] = Field(
        default="", description="TEST ONLY: tamper-chunks serves every snapshot chunk with a byte changed"
    )


class AppConfig(BaseModel):
    """What gonkad itself listens on and keeps; CometBFT's settings stay in its config.toml."""

    model_config = ConfigDict(extra="forbid")

    abci_address: str = "tcp://127.0.0.1:26658"
    grpc_address: str = "127.0.0.1:9090"
    pruning_keep_recent: int = Field(default=1000, ge=0, description="versions kept; 0 keeps all")
    min_gas_prices: str = "0ngonka"
    index_events: list[str] = Field(
        default_factory=list, description="event type.key pairs CometBFT indexes for tx_search; empty = all"
    )
    log_level: str = "info"
    simulation_gas_limit: int = Field(
        default=DEFAULT_SIMULATION_GAS_LIMIT,
        gt=0,
        description="most gas one simulation (/app/simulate, gRPC Simulate) may use, like the SDK's query-gas-limit",
    )
    query_workers: int = Field(
        default=1,
        ge=1,
        le=4,
        description="threads that run module queries and simulations beside the event loop (they share the GIL "
        "with consensus, so few)",
    )
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)
    api: ApiConfig = Field(default_factory=ApiConfig)
    state_sync: StateSyncConfig = Field(default_factory=StateSyncConfig)
    modules: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="node-local module settings, one [modules.NAME] table per module (e.g. where its key file is); "
        "never state: each module's configure() gets its table when the app is built",
    )


def config_dir(home: Path) -> Path:
    return home / "config"


def load_app_config(home: Path) -> AppConfig:
    path = config_dir(home) / APP_TOML
    if not path.exists():
        return AppConfig()
    with path.open("rb") as f:
        return AppConfig.model_validate(tomllib.load(f))


def snapshot_store(home: Path, config: AppConfig) -> SnapshotStore:
    """The home's state-sync snapshots, chunked as its app.toml says: what the node takes and serves, and what
    ``gonkad snapshots`` lists and exports."""
    return SnapshotStore(snapshot_dir(home), config.state_sync.snapshot_chunk_bytes)


def save_app_config(home: Path, config: AppConfig) -> None:
    lines = ["# gonkad application settings"]
    dumped = config.model_dump()
    modules = dumped.pop("modules")
    tables = {key: dumped.pop(key) for key, value in list(dumped.items()) if isinstance(value, dict)}
    for key, value in dumped.items():
        lines.append(f"{key} = {_toml_value(value)}")
    for name, settings in tables.items():
        lines.append(f"\n[{name}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in settings.items())
    for name, settings in sorted(modules.items()):
        lines.append(f"\n[modules.{name}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in sorted(settings.items()))
    (config_dir(home) / APP_TOML).write_text("\n".join(lines) + "\n")


def _toml_value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def edit_cometbft_config(home: Path, settings: dict[str, dict[str, object]]) -> None:
    """Set ``key = value`` inside ``[section]`` ("" for the top level) of CometBFT's config.toml.

    CometBFT's file is long and commented; editing lines in place keeps its comments and layout.
    """
    path = config_dir(home) / "config.toml"
    lines = path.read_text().splitlines()
    section = ""
    todo = {(s, k): v for s, kv in settings.items() for k, v in kv.items()}
    for i, line in enumerate(lines):
        header = re.match(r"^\[([\w.]+)\]\s*$", line)
        if header:
            section = header.group(1)
            continue
        assignment = re.match(r"^([\w-]+)\s*=", line)
        if assignment and (section, assignment.group(1)) in todo:
            key = assignment.group(1)
            lines[i] = f"{key} = {_toml_value(todo.pop((section, key)))}"
    if todo:
        missing = ", ".join(f"[{s}] {k}" for s, k in todo)
        raise ValueError(f"config.toml has no setting {missing}")
    path.write_text("\n".join(lines) + "\n")


def read_cometbft_config(home: Path) -> dict:
    with (config_dir(home) / "config.toml").open("rb") as f:
        return tomllib.load(f)


def split_address(address: str) -> tuple[str, int]:
    """``tcp://127.0.0.1:26658`` or ``127.0.0.1:9090`` -> (host, port)."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    return host or "127.0.0.1", int(port)
