"""Localnet processes for tests: a network that is always stopped, and a node killed as a crash would."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from gonkad import localnet, localnet_services
from gonkad.paths import pid_file
from sdk.client.process import live_pid

PROCESSES = ("gonkad", "cometbft")


def running_localnet(root: Path, settings: localnet.LocalnetSettings) -> Iterator[Path]:
    """For a module fixture: the network of ``settings`` under ``root``, started and past height 2; stopped
    when the fixture ends, whatever happened."""
    try:
        localnet.start(root, settings=settings)
        localnet.wait_for_height(root, 2, timeout_s=120)
        yield root
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)


def kill_node(root: Path, name: str, processes: tuple[str, ...] = PROCESSES) -> None:
    """SIGKILL ``processes`` of node ``name`` and wait until none of its processes runs."""
    home = Path(next(n.home for n in localnet.load(root).nodes if n.name == name))
    pids = [live_pid(pid_file(home, process), process) for process in processes]
    assert None not in pids, f"{name}: not all of {processes} are running"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while any(live_pid(pid_file(home, p), p) for p in PROCESSES):
        assert time.monotonic() < deadline, f"{name} did not go down"
        time.sleep(0.1)


def service(root: Path, name: str) -> localnet_services.ServiceSpec:
    spec = localnet.load(root).services
    assert spec is not None
    return next(s for s in spec.services if s.name == name)


def restart_executors(root: Path, flags: dict[int, list[str]]) -> None:
    """Executors ``i`` stopped and started again with ``flags[i]`` added (a test fault), all serving before it
    returns."""
    spec = localnet.load(root)
    assert spec.services is not None
    executors = {i: service(root, f"executor{i}") for i in flags}
    for executor in executors.values():
        localnet_services.stop_service(executor)
    for i, executor in executors.items():
        node = spec.node(executor.node)
        localnet_services.start_service(
            executor, spec.services.settings, node.rpc, f"127.0.0.1:{node.grpc_port}", extra=flags[i]
        )
    localnet_services.wait_until_serving(list(executors.values()), 60)
