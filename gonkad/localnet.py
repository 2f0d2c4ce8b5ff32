"""``gonkad localnet``: an N-validator network on 127.0.0.1, each node in its own home under one folder.

The folder holds ``localnet.json`` (chain id, per-node ports and homes, the services), the nodes' homes
``node0`` …, ``keyring-test/`` with the funded keys ``faucet`` and ``val0`` … (a ``test``-backend keyring) and,
with the settings' ``[services]``, the inference network's homes under ``services/`` (``localnet_services``).
``start`` builds it when absent and starts only the nodes and services whose processes are not running, so a
partly-down network is repaired by running it again. Tests shape it
further before or while it runs: ``set_module_settings`` (a node's app.toml ``[modules.*]``, e.g. x/bls's
``test_fault``), ``add_node`` (a full node that may then become a validator by ``tx stake create-validator``)
and ``add_twin`` (a second signer of a validator's consensus key).
"""

from __future__ import annotations

import base64
import os
import random
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gonkad import chain_registry, cosmovisor, genesis, localnet_services
from gonkad.config import (
    ApiConfig,
    AppConfig,
    StateSyncConfig,
    TelemetryConfig,
    edit_cometbft_config,
    load_app_config,
    save_app_config,
)
from gonkad.localnet_services import ServicesSettings, ServicesSpec
from gonkad.paths import LOCALNET_SETTINGS_FILE, cometbft_binary, pid_file
from gonkad.statesync import enable_state_sync
from sdk.client.process import live_pid, terminate
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.crypto import secp256k1
from sdk.keyring.keyring import Keyring, generate_test_keys
from sdk.services import gonka
from x.bls.keyfile import create_key_file, load_secret
from x.genutil.gentx import build_gentx, consensus_pubkey
from x.stake.params import default_params

BOND_DENOM = default_params().bond_denom
"""A new chain's collateral denom (x/stake's default params)."""

SPEC_FILE = "localnet.json"
NODE_PORTS = 6
"""A node's ports: p2p, CometBFT RPC, ABCI, gRPC, metrics and the REST API."""
LOCALNET_SNAPSHOT_INTERVAL, LOCALNET_SNAPSHOT_KEEP = 10, 20
"""Every node snapshots each 10th height (app.toml ``[state_sync]``), so a node may join by state sync, and keeps
the last 20: a snapshot stays for 200 heights (a minute or more), while a joining node fetches it and a test
reads it."""


class LocalnetSettings(BaseModel):
    """``localnet/settings.toml``: what the network is made of (its README says what each setting does)."""

    model_config = ConfigDict(extra="forbid")

    chain_id: str = Field(min_length=1)
    validators: int = Field(ge=1, le=64)
    total_supply_ngonka: int = Field(gt=0)
    validator_balance_ngonka: int = Field(gt=0)
    validator_stake_ngonka: int = Field(gt=0)
    index_events: list[str]
    consensus: dict[str, str]
    mempool: dict[str, int | str | bool] = Field(default_factory=dict)
    consensus_params: dict[str, Any] = Field(default_factory=dict)
    genesis: dict[str, Any] = Field(default_factory=dict)
    services: ServicesSettings | None = None
    """The inference network on top (``localnet_services``); None: the chain alone."""

    @property
    def faucet_ngonka(self) -> int:
        """The faucet holds what the validators' and TAs' keys do not, so the supply is exactly the total."""
        tas = self.services.transfer_agents * self.services.ta_balance_ngonka if self.services else 0
        return self.total_supply_ngonka - self.validators * self.validator_balance_ngonka - tas

    @model_validator(mode="after")
    def _amounts_add_up(self) -> LocalnetSettings:
        if self.validator_stake_ngonka > self.validator_balance_ngonka:
            raise ValueError("validator_stake_ngonka exceeds validator_balance_ngonka")
        if self.faucet_ngonka <= 0:
            raise ValueError("the validators' and TAs' balances leave nothing of total_supply_ngonka for the faucet")
        if self.services and self.services.ml_nodes is not None and self.services.ml_nodes > self.validators:
            raise ValueError(
                f"services.ml_nodes {self.services.ml_nodes} is more than the {self.validators} "
                "validators (one ML node per host)"
            )
        return self

    @property
    def hosts(self) -> int:
        """Validators that run an ML node behind their host's program."""
        return localnet_services.host_count(self.services, self.validators) if self.services else 0


def load_settings(
    path: Path = LOCALNET_SETTINGS_FILE,
    validators: int | None = None,
    chain_id: str | None = None,
    with_services: bool = False,
) -> LocalnetSettings:
    """The settings file, with ``validators`` and ``chain_id`` overriding it when given; its ``[services]`` only
    ``with_services`` (``gonkad localnet start`` asks for them; a test of the chain alone does not)."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    if not with_services:
        data.pop("services", None)
    overrides = {"validators": validators, "chain_id": chain_id}
    try:
        return LocalnetSettings.model_validate({**data, **{k: v for k, v in overrides.items() if v is not None}})
    except ValidationError as error:
        raise ValueError(f"{path}: {one_line(error)}") from None


def one_line(error: ValidationError) -> str:
    """A settings error as ``setting.path: reason``, each error once, for the CLI's one-line failure."""
    parts = []
    for item in error.errors():
        reason = str(item.get("ctx", {}).get("error") or item["msg"])
        where = ".".join(str(part) for part in item["loc"])
        parts.append(f"{where}: {reason}" if where else reason)
    return "; ".join(parts)


class NodeSpec(BaseModel):
    name: str
    home: str
    p2p_port: int
    rpc_port: int
    abci_port: int
    grpc_port: int
    metrics_port: int = 0
    """0: a network built before nodes served metrics."""
    node_id: str
    api_port: int | None = None
    """The REST API's (app.toml ``[api]``); None in a localnet built before the node served one."""

    @property
    def rpc(self) -> str:
        return f"tcp://127.0.0.1:{self.rpc_port}"

    @property
    def metrics_url(self) -> str | None:
        """Where the node's Prometheus metrics are served (app.toml ``[telemetry]``)."""
        return f"http://127.0.0.1:{self.metrics_port}/metrics" if self.metrics_port else None

    @property
    def api(self) -> str | None:
        """The node's REST API (app.toml ``[api]``)."""
        return f"http://127.0.0.1:{self.api_port}" if self.api_port else None

    @property
    def ports(self) -> tuple[int, ...]:
        return (self.p2p_port, self.rpc_port, self.abci_port, self.grpc_port, self.metrics_port, self.api_port or 0)


class LocalnetSpec(BaseModel):
    chain_id: str
    nodes: list[NodeSpec]
    twins: list[NodeSpec] = Field(default_factory=list)
    """Extra nodes running a validator's consensus key a second time (``add_twin``); never waited for."""
    services: ServicesSpec | None = None
    """The ML nodes, executors and TAs (``localnet_services``)."""

    def node(self, name: str) -> NodeSpec:
        return next(n for n in self.nodes if n.name == name)


LISTEN_PORTS = range(20000, 32768)
"""Where the localnet's listeners go: below the kernel's ephemeral range (32768–60999 on Linux), so a port chosen
here is not taken, before its server binds it, by the local end of some other process's outgoing connection (with
several networks, ML nodes and clients busy on one machine, that happened)."""


def free_ports(count: int) -> list[int]:
    """Ports free now, drawn at random from ``LISTEN_PORTS``; held open together so they are distinct."""
    draw = random.SystemRandom()
    sockets: list[socket.socket] = []
    try:
        while len(sockets) < count:
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", draw.choice(LISTEN_PORTS)))
            except OSError:  # taken: draw again
                s.close()
                continue
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _cometbft(*args: str) -> str:
    return subprocess.run([cometbft_binary(), *args], check=True, capture_output=True, text=True).stdout.strip()


def load_key(root: Path, name: str) -> secp256k1.PrivateKey:
    """A funded key from the localnet's ``test`` keyring (``gonkad keys … --home ROOT --keyring-backend test``)."""
    return Keyring(root, "test").private_key(name)


def consensus_settings(node: NodeSpec, peers: str, settings: LocalnetSettings) -> dict[str, dict[str, object]]:
    """Loopback ports, and the settings' consensus timeouts and mempool bounds."""
    return {
        "": {"moniker": node.name, "proxy_app": f"tcp://127.0.0.1:{node.abci_port}", "log_level": "error"},
        "rpc": {"laddr": f"tcp://127.0.0.1:{node.rpc_port}"},
        "p2p": {
            "laddr": f"tcp://127.0.0.1:{node.p2p_port}",
            "persistent_peers": peers,
            "addr_book_strict": False,
            "allow_duplicate_ip": True,
        },
        "consensus": dict(settings.consensus),
        "mempool": dict(settings.mempool),
    }


def build(
    root: Path, validators: int | None = None, chain_id: str | None = None, settings: LocalnetSettings | None = None
) -> LocalnetSpec:
    """The network of ``settings`` (default: ``load_settings(validators=…, chain_id=…)``) under ``root``."""
    settings = settings or load_settings(validators=validators, chain_id=chain_id)
    validators, chain_id = settings.validators, settings.chain_id
    root.mkdir(parents=True, exist_ok=True)
    funded = generate_test_keys(root, ["faucet", *(f"val{i}" for i in range(validators))])
    services = settings.services
    ports = free_ports(NODE_PORTS * validators + (2 * settings.hosts + services.transfer_agents if services else 0))
    nodes = [_init_node(root, i, ports[NODE_PORTS * i : NODE_PORTS * (i + 1)]) for i in range(validators)]
    app_state = genesis.merge_overrides(genesis.default_app_state(), settings.genesis)
    app_state = genesis.add_genesis_account(app_state, funded["faucet"], [("ngonka", settings.faucet_ngonka)])
    keyring = Keyring(root, "test")
    app_state = _add_validators(app_state, nodes, funded, keyring, settings)
    services_spec = None
    if services is not None:
        services_spec, app_state = localnet_services.build(
            root, services, keyring, nodes, ports[NODE_PORTS * validators :], app_state
        )
    _write_node_configs(nodes, app_state, settings)
    spec = LocalnetSpec(chain_id=chain_id, nodes=nodes, services=services_spec)
    (root / SPEC_FILE).write_text(spec.model_dump_json(indent=2))
    return spec


def _init_node(root: Path, i: int, ports: list[int]) -> NodeSpec:
    """Validator ``i``'s home (CometBFT's config and keys, the BLS key) on its ``NODE_PORTS`` ports."""
    home = root / f"node{i}"
    _cometbft("init", "--home", str(home))
    create_key_file(home)  # config/bls_key.json, as `gonkad init` makes it
    p2p, rpc, abci, grpc, metrics, api = ports
    node_id = _cometbft("show-node-id", "--home", str(home))
    return NodeSpec(
        name=f"node{i}",
        home=str(home),
        p2p_port=p2p,
        rpc_port=rpc,
        abci_port=abci,
        grpc_port=grpc,
        metrics_port=metrics,
        api_port=api,
        node_id=node_id,
    )


def _add_validators(
    app_state: dict[str, Any],
    nodes: list[NodeSpec],
    funded: dict[str, str],
    keyring: Keyring,
    settings: LocalnetSettings,
) -> dict[str, Any]:
    """``app_state`` with each validator's account funded and its gentx (which registers its BLS key)."""
    gen_txs = []
    for i, node in enumerate(nodes):
        app_state = genesis.add_genesis_account(
            app_state, funded[f"val{i}"], [("ngonka", settings.validator_balance_ngonka)]
        )
        raw = build_gentx(
            keyring.private_key(f"val{i}"),
            node.name,
            consensus_pubkey(Path(node.home)),
            (BOND_DENOM, settings.validator_stake_ngonka),
            settings.chain_id,
            bls_secret=load_secret(Path(node.home)),
        )  # the gentx registers the node's BLS key
        gen_txs.append(base64.b64encode(raw).decode())
    app_state["genutil"] = {"gen_txs": gen_txs}  # the validator set comes from these, at InitChain
    return app_state


def _write_node_configs(nodes: list[NodeSpec], app_state: dict[str, Any], settings: LocalnetSettings) -> None:
    """One genesis for every node, and each node's CometBFT settings."""
    genesis_path = Path(nodes[0].home) / "config" / "genesis.json"
    genesis.write_genesis(genesis_path, settings.chain_id, [], app_state, settings.consensus_params)
    for node in nodes:
        home = Path(node.home)
        if home / "config" / "genesis.json" != genesis_path:
            (home / "config" / "genesis.json").write_text(genesis_path.read_text())
        _node_settings(node, nodes, settings)


def _node_settings(node: NodeSpec, peers: list[NodeSpec], settings: LocalnetSettings) -> None:
    """One node's cometbft config.toml and app.toml: loopback ports, ``peers`` as its persistent peers."""
    home = Path(node.home)
    peer_list = ",".join(f"{p.node_id}@127.0.0.1:{p.p2p_port}" for p in peers if p.name != node.name)
    edit_cometbft_config(home, consensus_settings(node, peer_list, settings))
    save_app_config(
        home,
        AppConfig(
            abci_address=f"tcp://127.0.0.1:{node.abci_port}",
            grpc_address=f"127.0.0.1:{node.grpc_port}",
            api=ApiConfig(enable=node.api_port is not None, address=f"tcp://127.0.0.1:{node.api_port or 0}"),
            pruning_keep_recent=0,
            index_events=settings.index_events,
            telemetry=TelemetryConfig(enabled=True, prometheus_listen_addr=f"127.0.0.1:{node.metrics_port}"),
            state_sync=StateSyncConfig(
                snapshot_interval=LOCALNET_SNAPSHOT_INTERVAL, snapshot_keep_recent=LOCALNET_SNAPSHOT_KEEP
            ),
        ),
    )


def _new_node(root: Path, spec: LocalnetSpec, name: str) -> NodeSpec:
    """A fresh home ``root/name`` (``cometbft init``: its own node and consensus keys) on ports no node of
    ``spec`` has; not yet in the spec."""
    if any(n.name == name for n in [*spec.nodes, *spec.twins]) or (root / name).exists():
        raise ValueError(f"{name} exists already in {root}")
    home = root / name
    _cometbft("init", "--home", str(home))
    taken = {port for n in [*spec.nodes, *spec.twins] for port in n.ports}
    ports = free_ports(NODE_PORTS)
    while taken.intersection(ports):  # the nodes may not be running yet, so their ports can look free
        ports = free_ports(NODE_PORTS)
    p2p, rpc, abci, grpc, metrics, api = ports
    return NodeSpec(
        name=name,
        home=str(home),
        p2p_port=p2p,
        rpc_port=rpc,
        abci_port=abci,
        grpc_port=grpc,
        metrics_port=metrics,
        api_port=api,
        node_id=_cometbft("show-node-id", "--home", str(home)),
    )


def add_twin(root: Path, of: str, settings: LocalnetSettings | None = None) -> NodeSpec:
    """A second node (own home, data, node key, ports) signing with ``of``'s consensus key: a real double-sign."""
    spec = load(root)
    settings = settings or load_settings()
    name = f"{of}-twin"
    homes = {n.name: Path(n.home) for n in spec.nodes}
    if of not in homes:
        raise ValueError(f"no node {of} in {root}")
    source = homes[of]
    twin = _new_node(root, spec, name)
    for file in ("genesis.json", "priv_validator_key.json"):
        (Path(twin.home) / "config" / file).write_bytes((source / "config" / file).read_bytes())
    _node_settings(twin, spec.nodes, settings)
    spec.twins.append(twin)
    (root / SPEC_FILE).write_text(spec.model_dump_json(indent=2))
    return twin


def add_node(root: Path, name: str, settings: LocalnetSettings | None = None, state_sync: bool = False) -> NodeSpec:
    """A new full node of the network: its own home (``cometbft init``: node and consensus keys), a BLS key file
    (``config/bls_key.json``, as ``gonkad init`` makes it), the network's genesis.json, free ports, the
    network's nodes as persistent peers and an app.toml like theirs (``settings``: default ``load_settings()``).
    Appended to the spec's nodes, so ``start``, ``status`` and ``stop`` include it (start it with
    ``start_node``). It is no validator until its operator sends ``gonkad tx stake create-validator``
    (``--key-home`` its home) and a set-validators stage takes it in. ``state_sync``: it restores a snapshot
    its peers serve instead of replaying every block, trusting node0's latest block (the network must run)."""
    spec = load(root)
    settings = settings or load_settings()
    node = _new_node(root, spec, name)
    home = Path(node.home)
    create_key_file(home)
    (home / "config" / "genesis.json").write_bytes((Path(spec.nodes[0].home) / "config" / "genesis.json").read_bytes())
    _node_settings(node, spec.nodes, settings)
    if state_sync:
        enable_state_sync(home, [spec.nodes[0].rpc, spec.nodes[1 % len(spec.nodes)].rpc])
    spec.nodes.append(node)
    (root / SPEC_FILE).write_text(spec.model_dump_json(indent=2))
    return node


def set_module_settings(root: Path, node_name: str, modules: dict[str, dict[str, Any]]) -> AppConfig:
    """Merge ``modules`` ({module: {setting: value}}) into node ``node_name``'s app.toml ``[modules.*]`` tables,
    e.g. ``{"bls": {"test_fault": "forge-certificate"}}``; the node reads them when it (re)starts. Returns the
    node's app config as saved."""
    spec = load(root)
    node = next((n for n in [*spec.nodes, *spec.twins] if n.name == node_name), None)
    if node is None:
        raise ValueError(f"no node {node_name} in {root}")
    home = Path(node.home)
    config = load_app_config(home)
    merged = {name: dict(table) for name, table in config.modules.items()}
    for name, table in modules.items():
        merged.setdefault(name, {}).update(table)
    config = config.model_copy(update={"modules": merged})
    save_app_config(home, config)
    return config


def load(root: Path) -> LocalnetSpec:
    path = root / SPEC_FILE
    if not path.exists():
        raise FileNotFoundError(f"no localnet at {root}: run `gonkad localnet start --home {root}` first")
    return LocalnetSpec.model_validate_json(path.read_text())


def start_node(node: NodeSpec, extra_args: Sequence[str] = (), under_cosmovisor: bool = False) -> int:
    """Start ``gonkad start`` (with ``extra_args``) for one node in its own session, logging to its home; or
    ``cosmovisor run start`` with the home laid out for it (``gonkad.cosmovisor``: its releases installed by the
    caller), which starts gonkad and switches it at an upgrade."""
    home = Path(node.home)
    stray = live_pid(pid_file(home, "cometbft"), "cometbft")
    if stray is not None:
        terminate(stray, "cometbft")
    if under_cosmovisor:
        command = [cosmovisor.cosmovisor_binary(), "run", "start", "--home", str(home)]
        env = {**os.environ, **cosmovisor.environment(home, backup=False)}
    else:
        command, env = [sys.executable, "-m", "gonkad", "start", "--home", str(home), *extra_args], None
    with (home / "gonkad.log").open("ab") as logfile:
        proc = subprocess.Popen(
            command, stdout=logfile, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
    pid_file(home, "cosmovisor" if under_cosmovisor else "gonkad").write_text(str(proc.pid))
    return proc.pid


def start(
    root: Path,
    validators: int | None = None,
    chain_id: str | None = None,
    settings: LocalnetSettings | None = None,
    services_timeout_s: float = 180.0,
) -> list[str]:
    """Build if needed (see ``build``), then start every node that is not running (under Cosmovisor if its home
    is laid out for it: ``use_cosmovisor``) and, once the chain makes blocks, every service
    (``localnet_services``) that is not, waiting until they serve; returns the names started."""
    spec = load(root) if (root / SPEC_FILE).exists() else build(root, validators, chain_id, settings)
    started = []
    for node in spec.nodes:
        home = Path(node.home)
        if (
            live_pid(pid_file(home, "gonkad"), "gonkad") is None
            and live_pid(pid_file(home, "cosmovisor"), "cosmovisor") is None
        ):
            start_node(node, under_cosmovisor=cosmovisor.release_dir(home, None).is_dir())
            started.append(node.name)
    if spec.services is not None:
        missing = [s for s in spec.services.services if localnet_services.pid(s) is None]
        if missing:
            wait_for_height(root, 1, timeout_s=services_timeout_s)  # executors and TAs check the chain first
        for service in missing:
            node = spec.node(service.node)
            localnet_services.start_service(service, spec.services.settings, node.rpc, f"127.0.0.1:{node.grpc_port}")
            started.append(service.name)
        localnet_services.wait_until_serving(spec.services.services, services_timeout_s)
    return started


def use_cosmovisor(root: Path, upgrade: str | None = None, extra_args: Sequence[str] = ()) -> list[str]:
    """Lay every validator's home out for Cosmovisor: the running code as the genesis release (``upgrade``
    None; the nodes then start under Cosmovisor), or as the release of the plan ``upgrade`` (``extra_args``:
    its own switches, e.g. ``--test-upgrade NAME`` for a rehearsal). Returns the binaries written."""
    return [
        str(cosmovisor.install_release(Path(node.home), upgrade, extra_args=extra_args)) for node in load(root).nodes
    ]


def stop(root: Path) -> list[str]:
    stopped = []
    spec = load(root)
    for service in reversed(spec.services.services if spec.services else []):  # TAs, executors, then ML nodes
        if localnet_services.stop_service(service):
            stopped.append(service.name)
    for node in [*spec.nodes, *spec.twins]:
        home = Path(node.home)
        for name in ("cosmovisor", "gonkad", "cometbft"):  # cosmovisor first: it would start gonkad again
            pid = live_pid(pid_file(home, name), name)
            if pid is not None:
                terminate(pid, name)
                stopped.append(f"{node.name}/{name}")
    return stopped


def node_status(node: NodeSpec) -> dict[str, Any]:
    home = Path(node.home)
    info: dict[str, Any] = {
        "name": node.name,
        "home": node.home,
        "pids": {name: live_pid(pid_file(home, name), name) for name in ("gonkad", "cometbft")},
        "rpc": node.rpc,
        "grpc": f"127.0.0.1:{node.grpc_port}",
        "api": node.api,
        "abci": f"tcp://127.0.0.1:{node.abci_port}",
        "metrics": node.metrics_url,
        "height": None,
        "app_hash": None,
        "catching_up": None,
        "peers": None,
    }
    try:
        rpc = CometRPC(node.rpc, timeout=2.0)
        sync = rpc.status()["sync_info"]
        info.update(
            height=int(sync["latest_block_height"]),
            app_hash=sync["latest_app_hash"],
            catching_up=sync["catching_up"],
            peers=int(rpc.net_info()["n_peers"]),
        )
    except RPCError:
        pass
    return info


def status(root: Path) -> dict[str, Any]:
    spec = load(root)
    services = localnet_services.status(spec.services) if spec.services else {}
    nodes = [node_status(n) for n in spec.nodes]
    live = next((n for n, info in zip(spec.nodes, nodes) if info["height"]), None)
    race = race_status(live.rpc) if live is not None else None
    return {"chain_id": spec.chain_id, "home": str(root), "nodes": nodes, **services, "race": race}


def write_chain_info(root: Path) -> dict[str, str]:
    """The network's chain-registry files and Keplr suggestion (``gonkad/chain_registry.py``: every node's
    endpoints) written into ``root``; their paths by file name. A file a node setting no longer gives (Keplr's,
    once no node serves a REST API) is removed, so what is there is what the network is now."""
    files = chain_registry.chain_info([Path(n.home) for n in load(root).nodes])
    for stale in {chain_registry.KEPLR_FILE} - set(files):
        (root / stale).unlink(missing_ok=True)
    return chain_registry.write_chain_info(root, files)


def race_status(rpc: str) -> dict[str, Any] | None:
    """The race's last decision (x/sprint ``Weights`` of the current epoch, else the one before): its epoch and
    each host's count, outcome and weight. None when no epoch was decided yet (or the node does not answer)."""
    from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
    from protogen.gonka.sprint.v1 import sprint_pb2
    from x.sprint.client.queries import weights

    querier = Querier(rpc, timeout=2.0)
    try:
        epoch = querier.query(
            gonka("epochs").query + "CurrentEpoch",
            epochs_query.QueryCurrentEpochRequest(),
            epochs_query.QueryCurrentEpochResponse,
        ).epoch.number
        decided = [result for result in (weights(querier, e) for e in (epoch, epoch - 1) if e > 0) if result.height]
    except RPCError:
        return None
    if not decided:
        return None
    result = decided[0]
    return {
        "epoch": result.epoch,
        "carried_over": result.carried_over,
        "hosts": [
            {"host": h.host, "count": h.count, "weight": h.weight, "outcome": sprint_pb2.Outcome.Name(h.outcome)}
            for h in result.hosts
        ],
    }


def wait_for_height(root: Path, height: int, timeout_s: float = 120.0) -> dict[str, Any]:
    """Block until every running node reports at least ``height``; returns the last status."""
    deadline = time.monotonic() + timeout_s
    while True:
        current = status(root)
        heights = [n["height"] or 0 for n in current["nodes"]]
        if min(heights) >= height:
            return current
        if time.monotonic() > deadline:
            raise TimeoutError(f"localnet did not reach height {height} in {timeout_s}s: heights {heights}")
        time.sleep(0.5)
