"""The localnet's inference network: an ML node per host behind its executor proxy, and the Transfer Agents.

``localnet/settings.toml``'s ``[services]`` says how many: host ``valI`` (I < ``ml_nodes``) runs
``gonkad mlnode start --preset P --seed S`` and ``gonkad executor start --from valI`` on its own validator node;
``taJ`` runs ``gonkad agent start`` on validator node J mod N with a key of its own. Everything is on chain
from genesis: the preset's model (identity ``name@sha256:HEX``, the node's own) and every host's ML node,
registered at its executor's URL, and each TA's account (funded from the faucet's share). Each service has a
home under ``ROOT/services/<name>/`` with its log and pid file (an executor's also its host's key, copied from
the localnet's keyring, and its finish journal; a TA's its own key).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator

from gonkad import genesis
from gonkad.paths import pid_file
from sdk.cli.flags import message_dict
from sdk.client.process import live_pid, terminate
from sdk.keyring.keyring import Keyring, generate_test_keys
from x.sprint.params import default_params

Kind = Literal["mlnode", "executor", "agent"]
HEALTH = {"mlnode": "/health", "executor": "/v1/executor/status", "agent": "/v1/status"}
"""What answers 200 once a service serves."""
EXPORT_PASSPHRASE = "localnet"
TRAINING_RUNS = "runs"
"""Under the localnet's root: the training runs of ``gonkad localnet train-and-serve``, whose replay data each
executor serves for its own host's workers."""
VERDICT_WINDOW = 600
"""Blocks a drawn host has to replay a training round: the hosts replay on CPU cores the validators share."""
"""Only to move a test-backend host key from the localnet's keyring into its executor's home."""


class ServicesSettings(BaseModel):
    """``[services]`` of ``localnet/settings.toml``."""

    model_config = ConfigDict(extra="forbid")

    ml_nodes: int | None = Field(None, ge=0, le=64)
    """Hosts val0 … with an ML node (at most the validators); left out: every validator is one."""
    transfer_agents: int = Field(ge=0, le=16)
    preset: str = "tiny"
    seed: int = 0
    race_preset: str = "tiny"
    """The Sprint race the ML nodes run (``mlnode.sprint.params.RACE_PRESETS``); its params hash goes to x/sprint's
    genesis."""
    race_nonces: int = Field(16_384, ge=1)
    """Nonces each host races per epoch (``--sprint-max-nonces``): the ML nodes share the machine's cores with the
    validators, so they race a budget, not the whole stage."""

    @field_validator("race_preset")
    @classmethod
    def _known_race(cls, name: str) -> str:
        from mlnode.sprint.params import race_preset

        race_preset(name)
        return name

    price_per_token_ngonka: int = Field(gt=0)
    max_concurrency: int = Field(ge=1)
    """Each ML node's batch slots; also registered on chain, so the TAs route by it."""
    threads: int = Field(1, ge=1)
    """Torch threads per ML node."""
    max_tokens_limit: int = Field(256, ge=1)
    """The largest max_tokens an ML node takes."""
    ta_balance_ngonka: int = Field(gt=0)
    """Each TA's account at genesis: what pays its transactions' fees."""
    ta_queue_bound: int = Field(256, ge=0)
    """Requests a TA holds while every node is busy; beyond it 429."""
    fetching_hosts: int = Field(1, ge=0)
    """The last K hosts opt in to fetching models registered with a ``source_url`` (their executors' ``host.toml``:
    ``[models] fetch = true``, ``host/README.md``); ``gonkad localnet train-and-serve`` publishes from val0."""


class ServiceSpec(BaseModel):
    name: str
    kind: Kind
    home: str
    port: int
    node: str
    """The validator node whose RPC and gRPC it uses (``mlnode``: the host's)."""
    key: str = ""
    """The key it signs with: the host's (executor), its own (agent)."""
    upstream: str = ""
    """An executor's ML node URL."""
    peers: list[str] = Field(default_factory=list)
    """A TA's other TAs."""
    address: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class ServicesSpec(BaseModel):
    settings: ServicesSettings
    model: str
    """The registered model's id (the ML nodes' identity)."""
    services: list[ServiceSpec]

    def of(self, kind: Kind) -> list[ServiceSpec]:
        return [s for s in self.services if s.kind == kind]


def model_identity(preset: str, seed: int) -> tuple[str, str, int]:
    """The preset's (name, weights SHA-256, context length), as ``gonkad mlnode start --preset`` serves it."""
    from mlnode.weights import random_model  # torch loads only for a network with ML nodes

    loaded = random_model(preset, seed)
    return loaded.name, loaded.sha256, loaded.config.max_seq_len


def build(
    root: Path,
    settings: ServicesSettings,
    keyring: Keyring,
    nodes: list[Any],
    ports: list[int],
    app_state: dict[str, Any],
) -> tuple[ServicesSpec, dict[str, Any]]:
    """Service homes and keys under ``root/services``, and ``app_state`` with the model, the ML nodes and the
    TAs' accounts. ``nodes`` are the validators' NodeSpecs; ``ports`` 2 per ML node (its own, its executor's) and 1
    per TA."""
    model = _add_model(app_state, settings)
    _set_race(app_state, settings.race_preset)
    app_state["learning"]["params"]["verdict_window"] = VERDICT_WINDOW
    hosts = host_count(settings, len(nodes))
    services: list[ServiceSpec] = []
    for i in range(hosts):
        services += _ml_node(root, i, nodes[i].name, ports[2 * i : 2 * i + 2], keyring, model, settings, app_state)
        _write_host_config(
            Path(services[-1].home), settings, fetch=i >= hosts - settings.fetching_hosts, runs=root / TRAINING_RUNS
        )
    agents, app_state = _transfer_agents(root, settings, nodes, ports[2 * hosts :], app_state)
    return ServicesSpec(settings=settings, model=model, services=services + agents), app_state


def host_count(settings: ServicesSettings, validators: int) -> int:
    """How many validators run an ML node: ``ml_nodes``, or every one."""
    return validators if settings.ml_nodes is None else settings.ml_nodes


def _set_race(app_state: dict[str, Any], preset: str) -> None:
    """x/sprint's genesis takes the race the ML nodes run: its params hash (the other params as the genesis
    overrides set them, else x/sprint's defaults)."""
    from mlnode.sprint.params import race_params_hash, race_preset

    sprint = app_state.setdefault("sprint", {})
    params = {**message_dict(default_params()), **sprint.get("params", {})}
    params["race_params_hash"] = base64.b64encode(race_params_hash(race_preset(preset))).decode()
    sprint["params"] = params


def _add_model(app_state: dict[str, Any], settings: ServicesSettings) -> str:
    """The settings' model added to x/inference's genesis; its id."""
    name, sha, context = model_identity(settings.preset, settings.seed)
    model = f"{name}@sha256:{sha}"
    app_state.setdefault("inference", {}).setdefault("models", []).append(
        {
            "id": model,
            "name": name,
            "weights_sha256": sha,
            "context_length": str(context),
            "price_per_token": str(settings.price_per_token_ngonka),
        }
    )
    return model


def _ml_node(
    root: Path,
    i: int,
    node: str,
    ports: list[int],
    keyring: Keyring,
    model: str,
    settings: ServicesSettings,
    app_state: dict[str, Any],
) -> list[ServiceSpec]:
    """ML node ``i`` and its executor (which signs with validator ``i``'s key, copied to its home), the node
    registered in x/inference's genesis; ``ports``: the ML node's and the executor's."""
    mlnode_port, executor_port = ports
    host_key = f"val{i}"
    mlnode = ServiceSpec(
        name=f"mlnode{i}", kind="mlnode", home=str(root / "services" / f"mlnode{i}"), port=mlnode_port, node=node
    )
    executor = ServiceSpec(
        name=f"executor{i}",
        kind="executor",
        home=str(root / "services" / f"executor{i}"),
        port=executor_port,
        node=node,
        key=host_key,
        upstream=mlnode.url,
        address=keyring.get(host_key).address,
    )
    for service in (mlnode, executor):
        Path(service.home).mkdir(parents=True, exist_ok=True)
    Keyring(Path(executor.home), "test").import_key(
        host_key, keyring.export(host_key, EXPORT_PASSPHRASE), EXPORT_PASSPHRASE
    )
    app_state["inference"].setdefault("nodes", []).append(
        {
            "operator": executor.address,
            "node_id": f"node-{i}",
            "url": executor.url,
            "models": [model],
            "max_concurrency": settings.max_concurrency,
        }
    )
    return [mlnode, executor]


def _write_host_config(home: Path, settings: ServicesSettings, fetch: bool, runs: Path) -> None:
    """An executor's ``host.toml``: whether it fetches registered models, whose ML nodes run like the preset's, and
    the localnet's training runs (``runs``, where ``gonkad localnet train-and-serve`` trains), whose replay data of
    this host's workers it serves."""
    from host.models import HOST_TOML

    (home / HOST_TOML).write_text(
        "[models]\n"
        f"fetch = {'true' if fetch else 'false'}\n"
        "poll_s = 1\n"
        f"threads = {settings.threads}\n"
        f"max_concurrency = {settings.max_concurrency}\n"
        f"max_tokens_limit = {settings.max_tokens_limit}\n"
        "\n[training]\n"
        f"runs = {json.dumps(str(runs))}\n"
    )


def _transfer_agents(
    root: Path, settings: ServicesSettings, nodes: list[Any], ports: list[int], app_state: dict[str, Any]
) -> tuple[list[ServiceSpec], dict[str, Any]]:
    """The TAs, each with a funded key, spread over the validators and peers of one another."""
    urls = [f"http://127.0.0.1:{port}" for port in ports[: settings.transfer_agents]]
    agents = []
    for j in range(settings.transfer_agents):
        home = root / "services" / f"ta{j}"
        address = generate_test_keys(home, ["ta"])["ta"]
        app_state = genesis.add_genesis_account(app_state, address, [("ngonka", settings.ta_balance_ngonka)])
        agents.append(
            ServiceSpec(
                name=f"ta{j}",
                kind="agent",
                home=str(home),
                port=ports[j],
                node=nodes[j % len(nodes)].name,
                key="ta",
                address=address,
                peers=[url for k, url in enumerate(urls) if k != j],
            )
        )
    return agents, app_state


def command(service: ServiceSpec, settings: ServicesSettings, rpc: str, grpc: str) -> list[str]:
    """The ``gonkad`` command line that runs ``service`` (``rpc``/``grpc``: its validator node's addresses)."""
    gonkad = [sys.executable, "-m", "gonkad"]
    if service.kind == "mlnode":
        return [
            *gonkad,
            "mlnode",
            "start",
            "--preset",
            settings.preset,
            "--seed",
            str(settings.seed),
            "--port",
            str(service.port),
            "--threads",
            str(settings.threads),
            "--max-concurrency",
            str(settings.max_concurrency),
            "--max-tokens-limit",
            str(settings.max_tokens_limit),
            "--race-preset",
            settings.race_preset,
        ]
    chain = [
        "--home",
        service.home,
        "--keyring-backend",
        "test",
        "--from",
        service.key,
        "--node",
        rpc,
        "--grpc-addr",
        grpc,
        "--port",
        str(service.port),
    ]
    if service.kind == "executor":
        race = ["--sprint-max-nonces", str(settings.race_nonces)]
        return [*gonkad, "executor", "start", *chain, "--mlnode", service.upstream, *race]
    return [
        *gonkad,
        "agent",
        "start",
        *chain,
        "--queue-bound",
        str(settings.ta_queue_bound),
        *(arg for url in service.peers for arg in ("--ta", url)),
    ]


def pid(service: ServiceSpec) -> int | None:
    return live_pid(pid_file(Path(service.home), service.kind), service.kind)


def start_service(
    service: ServiceSpec, settings: ServicesSettings, rpc: str, grpc: str, extra: Sequence[str] = ()
) -> int:
    """Start one service in its own session, logging to its home; its pid file is written at once (the
    executor and the agent write it again when they serve, and remove it when they stop). ``extra``: flags added
    to its command line (a test's fault, say)."""
    home = Path(service.home)
    with (home / f"{service.kind}.log").open("ab") as logfile:
        proc = subprocess.Popen(
            [*command(service, settings, rpc, grpc), *extra],
            stdout=logfile,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    pid_file(home, service.kind).write_text(str(proc.pid))
    return proc.pid


def stop_service(service: ServiceSpec) -> bool:
    running = pid(service)
    if running is None:
        return False
    terminate(running, service.kind)
    if service.kind == "mlnode":
        pid_file(Path(service.home), service.kind).unlink(missing_ok=True)
    return True


def healthy(service: ServiceSpec, timeout_s: float = 2.0) -> bool:
    try:
        return httpx.get(service.url + HEALTH[service.kind], timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until_serving(services: list[ServiceSpec], timeout_s: float) -> None:
    """Block until every service answers its health path, and every TA sees every ML node alive."""
    deadline = time.monotonic() + timeout_s
    executors = sum(1 for s in services if s.kind == "executor")
    for service in services:
        while not healthy(service):
            if pid(service) is None:
                raise RuntimeError(f"{service.name} exited; see {service.home}/{service.kind}.log")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{service.name} does not answer at {service.url} after {timeout_s}s")
            time.sleep(0.3)
    for ta in (s for s in services if s.kind == "agent"):
        while (
            sum(n["state"] == "alive" for n in httpx.get(ta.url + "/v1/status", timeout=5).json()["nodes"]) < executors
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{ta.name} does not see {executors} live ML nodes after {timeout_s}s")
            time.sleep(0.3)


def status(spec: ServicesSpec) -> dict[str, Any]:
    """The model, every ML node (with its executor, the URL TAs route to) and every TA, with pids."""
    ml_nodes = [
        {
            "name": mlnode.name,
            "url": mlnode.url,
            "pid": pid(mlnode),
            "executor": {"url": executor.url, "host": executor.address, "pid": pid(executor)},
        }
        for mlnode, executor in zip(spec.of("mlnode"), spec.of("executor"))
    ]
    tas = [
        {"name": ta.name, "url": ta.url, "address": ta.address, "node": ta.node, "pid": pid(ta)}
        for ta in spec.of("agent")
    ]
    return {"model": spec.model, "ml_nodes": ml_nodes, "transfer_agents": tas}
