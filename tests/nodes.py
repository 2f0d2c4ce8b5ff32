"""Localnet processes for tests: a network that is always stopped, and a node killed as a crash would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2

from gonkad import localnet, localnet_services
from gonkad.paths import pid_file
from sdk.client.process import live_pid
from sdk.client.querier import Querier
from sdk.client.tx import TxOptions, deliver, wait_for_tx
from sdk.client.txbuilder import address_of
from sdk.keyring.keyring import Keyring

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


def bond_validator(root: Path, node: localnet.NodeSpec, stake: int) -> tuple[str, int]:
    """``node``'s operator (a new key ``<name>op`` in the localnet's test keyring), funded by the faucet, bonds
    ``stake`` ngonka with ``gonkad tx stake create-validator`` (its consensus and BLS keys from the node's home),
    through node0. Returns the operator's address and the height the creation was committed at."""
    spec = localnet.load(root)
    via = spec.nodes[0].rpc
    querier = Querier(via)
    faucet = localnet.load_key(root, "faucet")
    key_name = f"{node.name}op"
    operator = Keyring(root, "test").add(key_name)[0].address
    fund = bank_tx.MsgSend(
        from_address=address_of(faucet),
        to_address=operator,
        amount=[coin_pb2.Coin(denom="ngonka", amount=str(stake + 10**9))],
    )
    deliver(querier, faucet, [fund], spec.chain_id, TxOptions())
    common = ["--home", str(root), "--keyring-backend", "test", "--node", via, "--gas", "auto"]
    sent = subprocess.run(
        [sys.executable, "-m", "gonkad", "tx", "stake", "create-validator", f"{stake}ngonka", "--moniker", node.name]
        + ["--from", key_name, "--key-home", node.home, *common, "--gas-adjustment", "1.5", "-y", "--output", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"},
    )
    assert sent.returncode == 0, sent.stderr + sent.stdout
    committed = wait_for_tx(querier, json.loads(sent.stdout)["txhash"], 60)
    assert int(committed["tx_result"].get("code", 0)) == 0, committed["tx_result"]
    return operator, int(committed["height"])
