"""``gonkad start``: the ABCI server over the app's store, supervising a ``cometbft`` child process.

If either side dies the node stops as a whole, so an outside supervisor (``gonkad localnet start``,
systemd) restarts it cleanly; CometBFT's handshake then replays whatever the app has not committed.
The ABCI, gRPC and REST (app.toml ``[api]``) servers share one event loop and one small pool of query
workers (sdk/workers.py), which is drained before the store closes. With ``[telemetry] enabled`` the node
serves Prometheus metrics on its own threads (sdk/telemetry): the servers report each call, the modules their
figures when scraped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import logging
import os
import signal
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry

from app import GonkaApp
from gonkad.config import AppConfig, load_app_config, read_cometbft_config, snapshot_store, split_address
from gonkad.paths import app_db, cometbft_binary, pid_file
from sdk.abci.server import ABCIServer
from sdk.grpc import GRPCServer
from sdk.invariants import InvariantBroken
from sdk.rest import RESTServer
from sdk.snapshots.manager import SnapshotManager
from sdk.store.commitstore import CommitStore
from sdk.telemetry.module_figures import ModuleFigures, SnapshotJob, read_figures
from sdk.telemetry.node_metrics import NodeMetrics
from sdk.telemetry.server import MetricsServer
from sdk.workers import query_workers
from x.bls.keyfile import key_file
from x.upgrade.errors import UpgradeHalt
from x.upgrade.keys import UPGRADE_INFO_FILE

log = logging.getLogger("gonkad.node")
PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 10.0
DEFAULT_COMET_RPC = "tcp://127.0.0.1:26657"
SNAPSHOT_WAIT_S = 10.0
"""How long a scrape waits for the event loop to take a committed snapshot for the modules' figures."""
T = TypeVar("T")
WEB_DIR = Path(__file__).resolve().parent / "web"
"""The network page the REST server serves at ``/`` (and its other files at ``/web/<name>``), where present."""


def _die_with_parent() -> None:
    """Runs in the child before exec: if gonkad is killed, the kernel kills cometbft too."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


async def _stop_child(child: asyncio.subprocess.Process) -> None:
    if child.returncode is not None:
        return
    child.terminate()
    try:
        await asyncio.wait_for(child.wait(), STOP_GRACE_S)
    except TimeoutError:
        child.kill()
        await child.wait()


def comet_rpc_address(home: Path) -> str:
    """CometBFT's RPC listen address from the node home; the default when gonkad runs without one."""
    try:
        return str(read_cometbft_config(home)["rpc"]["laddr"])
    except FileNotFoundError:
        return DEFAULT_COMET_RPC


def module_settings(home: Path, modules: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """app.toml's ``[modules.*]`` as the app gets them: x/bls's ``key_file`` defaults to the home's
    ``config/bls_key.json`` (made by ``gonkad init``), and a relative one is relative to the home; x/upgrade
    writes ``upgrade-info.json`` into the home's ``data/``, where Cosmovisor looks for it."""
    settings = {name: dict(table) for name, table in modules.items()}
    bls = settings.setdefault("bls", {})
    bls["key_file"] = str(home / bls.get("key_file", str(key_file(Path()))))
    settings.setdefault("upgrade", {}).setdefault("info_file", str(home / "data" / UPGRADE_INFO_FILE))
    return settings


async def run_node(
    home: Path,
    abci_only: bool = False,
    cometbft: str | None = None,
    check_invariants: bool = False,
    test_upgrade: str | None = None,
) -> int:
    """Serve until stopped; 1 if cometbft died, 2 if the app halted: a broken invariant (``check_invariants``)
    or a software upgrade's height (x/upgrade). ``test_upgrade``: TEST ONLY, the binary carries that plan.

    Raises UpgradeNeeded before serving anything if the node halted at a plan this binary has no handler for.
    """
    config = load_app_config(home)
    store, app = _open_app(home, config, check_invariants, test_upgrade)
    try:
        app.refuse_unknown_upgrade()
    except UpgradeHalt:
        store.close()
        raise
    workers = query_workers(config.query_workers)
    host, port = split_address(config.abci_address)
    registry = CollectorRegistry() if config.telemetry.enabled else None
    metrics, figures = _node_metrics(registry, app) if registry is not None else (None, None)
    server = ABCIServer(
        app,
        host,
        port,
        workers=workers,
        halt_on=(InvariantBroken, UpgradeHalt),
        observe=metrics.observe_abci if metrics is not None else None,
    )
    await server.start()
    grpc_server = GRPCServer(
        app,
        config.grpc_address,
        comet_rpc_address(home),
        workers,
        observe=metrics.observe_grpc_query if metrics is not None else None,
    )
    metrics_server: MetricsServer | None = None
    rest_server = _rest_server(config, grpc_server, workers) if config.api.enable else None
    pid_file(home, "gonkad").write_text(str(os.getpid()))
    log.info("ABCI server on %s:%d, height %d", host, server.port, store.version)

    stop = _stop_on_signals()
    child: asyncio.subprocess.Process | None = None
    exit_code = 0
    try:
        if not abci_only:
            child = await _start_cometbft(home, cometbft, f"tcp://{host}:{server.port}")
        await grpc_server.start()  # after the fork: gRPC's threads must not be running when cometbft is forked
        if registry is not None:  # after the fork too, for the same reason
            metrics_server = MetricsServer(registry, *split_address(config.telemetry.prometheus_listen_addr))
        if rest_server is not None:
            await rest_server.start()
        exit_code = await _wait_for_end(stop, server, child)
    finally:
        if child is not None:
            await _stop_child(child)
        if rest_server is not None:
            await rest_server.stop()
        await grpc_server.stop()
        await server.stop()
        if metrics_server is not None:
            metrics_server.stop()
        if figures is not None:  # a scrape may still be reading a snapshot, and may wait on this loop to take one
            await asyncio.to_thread(figures.close)
        workers.shutdown(wait=True, cancel_futures=True)  # a running job still reads the store
        if app.snapshots is not None:  # so does a snapshot being written
            await asyncio.to_thread(app.snapshots.close)
        store.close()
        for name in ("gonkad", "cometbft"):
            pid_file(home, name).unlink(missing_ok=True)
    return exit_code


def _node_metrics(registry: CollectorRegistry, app: GonkaApp) -> tuple[NodeMetrics, ModuleFigures]:
    """The framework's metrics and the modules' figures in ``registry`` (the node's own). Call on the event
    loop: its thread alone may take the store's snapshots that a scrape reads the modules' figures from."""
    loop = asyncio.get_running_loop()

    def take_snapshot() -> SnapshotJob:
        return _on_loop(loop, lambda: app.committed_job(lambda state, header: read_figures(app.modules, state, header)))

    figures = ModuleFigures(lambda: app.store.version, take_snapshot)
    registry.register(figures)
    return NodeMetrics(registry), figures


def _on_loop(loop: asyncio.AbstractEventLoop, call: Callable[[], T]) -> T:
    """``call()`` run on ``loop`` between two of its callbacks, from another thread, waited for."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(call())
        except Exception as exc:  # noqa: BLE001 - handed to the waiting thread
            future.set_exception(exc)

    loop.call_soon_threadsafe(run)
    return future.result(SNAPSHOT_WAIT_S)


def _rest_server(config: AppConfig, grpc_server: GRPCServer, workers: Executor) -> RESTServer:
    """app.toml's ``[api]`` server, answering every service the gRPC server serves."""
    host, port = split_address(config.api.address)
    static_dir = WEB_DIR if WEB_DIR.is_dir() else None
    return RESTServer(grpc_server.services(), host, port, config.api.max_body_bytes, workers, static_dir)


def _open_app(
    home: Path, config: AppConfig, check_invariants: bool, test_upgrade: str | None
) -> tuple[CommitStore, GonkaApp]:
    """The home's store and the app over it, set up as app.toml says."""
    app_db(home).parent.mkdir(parents=True, exist_ok=True)
    store = CommitStore(str(app_db(home)), keep_recent=config.pruning_keep_recent)
    app = GonkaApp(
        store,
        min_gas_prices=config.min_gas_prices,
        index_events=frozenset(config.index_events),
        simulation_gas_limit=config.simulation_gas_limit,
        check_invariants=check_invariants,
        module_config=module_settings(home, config.modules),
        snapshots=SnapshotManager(
            snapshot_store(home, config),
            config.state_sync.snapshot_interval,
            config.state_sync.snapshot_keep_recent,
            tamper_chunks=config.state_sync.test_fault == "tamper-chunks",
        ),
        test_upgrade=test_upgrade,
    )
    return store, app


def _stop_on_signals() -> asyncio.Event:
    """An event that SIGTERM or SIGINT sets."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _start_cometbft(home: Path, cometbft: str | None, proxy_app: str) -> asyncio.subprocess.Process:
    """cometbft on ``home``, talking to the app at ``proxy_app``, dying with this process; its pid file written."""
    child = await asyncio.create_subprocess_exec(
        cometbft_binary(cometbft),
        "start",
        "--home",
        str(home),
        "--proxy_app",
        proxy_app,
        preexec_fn=_die_with_parent,
    )
    pid_file(home, "cometbft").write_text(str(child.pid))
    return child


async def _wait_for_end(stop: asyncio.Event, server: ABCIServer, child: asyncio.subprocess.Process | None) -> int:
    """Wait for a stop signal, a halt or cometbft's exit: 0, 2 or 1."""
    waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(server.halted.wait())]
    if child is not None:
        waiters.append(asyncio.create_task(child.wait()))
    done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if server.halted.is_set():
        log.critical("halted: %s", server.halt_reason)
        return 2
    if child is not None and child.returncode is not None:
        log.error("cometbft exited with code %s; stopping", child.returncode)
        return 1
    return 0
