"""x/upgrade on a real 2-validator network, every action by the ``gonkad`` CLI; node0 runs under Cosmovisor
(v1.5.0, unchanged; its home laid out by ``gonkad.cosmovisor``: the genesis release, and the plan's release, the
same code started with ``--test-upgrade v2``), node1 as a plain ``gonkad start``. First a plan ("never") and its
cancellation pass in one round: the chain goes past the plan's height and nothing halts. Then a software upgrade
proposed (``tx upgrade software-upgrade``) and voted through: both nodes halt at the plan's height with the SDK's
log line and ``data/upgrade-info.json``; Cosmovisor switches node0 to the new release on its own; node1 started
again without the handler refuses, and restarted with it (``gonkad start --test-upgrade``) migrates x/upgrade
1 → 2; the chain goes on with identical app hashes.

Plans' heights are set from the block rate measured first, far enough past the voting period's end. node1 is
restarted once it has halted, as Cosmovisor would: a node that missed the plan block's last precommit before its
peer halted gets it from the restarted peer, and halts then.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from nodes import running_localnet
from test_gov_localnet import Net

from gonkad import cosmovisor, genesis, localnet
from gonkad.paths import pid_file
from sdk.client.process import live_pid
from sdk.client.rpc import CometRPC

DENOM = "ngonka"
DEPOSIT = 10 * 10**9
VOTING_S = 20
"""Two votes, one per validator, cast side by side: well inside it on a busy machine."""
NAME = "v2"
INFO = '{"binaries":{"linux/amd64":"file:///nowhere/gonkad"}}'
OVERRIDES = {
    "gov": {
        "params": {
            "min_deposit": [{"denom": DENOM, "amount": str(DEPOSIT)}],
            "max_deposit_period": "30s",
            "voting_period": f"{VOTING_S}s",
        }
    }
}
_base = localnet.load_settings(validators=2, chain_id="gonka-upgrade")
UNDER_COSMOVISOR = "node0"
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})


def wait_until(what: str, done: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"{what}: not in {timeout_s:.0f}s"
        time.sleep(0.5)


def gonkad_running(home: Path) -> bool:
    return live_pid(pid_file(home, "gonkad"), "gonkad") is not None


def restart_as_they_halt(nodes: list[localnet.NodeSpec], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Restart each node with the handler once it has halted for the plan, as Cosmovisor does for node0. A node
    that missed the plan block's last precommit before its peers halted waits until a restarted peer hands it on;
    then it halts too. The first halted node is first started without the handler: its answer."""
    homes = [Path(n.home) for n in nodes]
    restarted: set[int] = set()
    refused = None
    deadline = time.monotonic() + timeout_s
    while len(restarted) < len(nodes):
        for i, home in enumerate(homes):
            if i in restarted or gonkad_running(home) or "halted: UPGRADE" not in (home / "gonkad.log").read_text():
                continue
            if refused is None:
                refused = subprocess.run(
                    [sys.executable, "-m", "gonkad", "start", "--home", str(home)],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            localnet.start_node(nodes[i], ["--test-upgrade", NAME])
            restarted.add(i)
        assert time.monotonic() < deadline, f"only nodes {sorted(restarted)} halted in {timeout_s:.0f}s"
        time.sleep(0.5)
    assert refused is not None
    return refused


def propose_and_pass(net: Net, *proposals: list[str]) -> list[int]:
    """Each proposal (``tx upgrade …`` arguments) submitted by val0, voted yes by both validators, and passed."""
    pids = []
    for args in proposals:
        proposed = net.tx("upgrade", *args, "--deposit", f"{DEPOSIT}{DENOM}", key="val0")
        found = [e for e in proposed["events"] if e["type"] == "submit_proposal"]
        pids.append(int({a["key"]: a["value"] for a in found[0]["attributes"]}["proposal_id"]))
    votes = [(pid, key) for pid in pids for key in ("val0", "val1")]
    with ThreadPoolExecutor(2) as pool:  # one voter per thread at a time: each key's sequence in order
        list(
            pool.map(
                lambda key: [net.tx("gov", "vote", str(p), "yes", key=key) for p, k in votes if k == key],
                ["val0", "val1"],
            )
        )
    for pid in pids:
        wait_until(
            "the proposal passed", lambda p=pid: net.proposal(p)["status"] != "PROPOSAL_STATUS_VOTING_PERIOD", 60
        )
        assert net.proposal(pid)["status"] == "PROPOSAL_STATUS_PASSED", net.proposal(pid)
    return pids


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The cancelled plan, then the plan proposed, passed and reached: each node halted, node0 switched by
    Cosmovisor, node1 started again without the handler (its answer kept) and then with it; the chain three
    blocks past the plan."""
    home = tmp_path_factory.mktemp("upgrade")
    spec = localnet.build(home, settings=SETTINGS)
    node0 = next(n for n in spec.nodes if n.name == UNDER_COSMOVISOR)
    cosmovisor.install_release(Path(node0.home), None)
    cosmovisor.install_release(Path(node0.home), NAME, extra_args=["--test-upgrade", NAME])
    for root in running_localnet(home, SETTINGS):  # node0 under Cosmovisor (its home is laid out for it), node1 plain
        net = Net(root)
        nodes = localnet.load(root).nodes
        homes = [Path(n.home) for n in nodes]
        start_height, started = net.rpc.height(), time.monotonic()
        time.sleep(5)
        rate = (net.rpc.height() - start_height) / (time.monotonic() - started)
        ahead = max(20, int(rate * (VOTING_S + 25)))

        never = net.rpc.height() + ahead
        propose_and_pass(
            net, ["software-upgrade", "never", "--upgrade-height", str(never)], ["cancel-software-upgrade"]
        )
        plan_after_cancel = net.query("upgrade", "plan")
        assert net.rpc.height() < never - 1, f"the cancellation passed too late for the plan's height {never}"

        height = net.rpc.height() + ahead
        propose_and_pass(net, ["software-upgrade", NAME, "--upgrade-height", str(height), "--upgrade-info", INFO])
        plan = net.query("upgrade", "plan")["plan"]
        passed_at = net.rpc.height()
        assert passed_at < height - 1, f"the plan passed at {passed_at}, too late for its height {height}"
        plain = [n for n in nodes if n.name != UNDER_COSMOVISOR]
        refused = restart_as_they_halt(plain, (height - passed_at) + 120)
        localnet.wait_for_height(root, height + 3, timeout_s=120)
        yield {
            "net": net,
            "homes": homes,
            "height": height,
            "plan": plan,
            "refused": refused,
            "never": never,
            "plan_after_cancel": plan_after_cancel,
        }


def test_a_cancelled_plan_never_halts_the_chain(upgrade: dict[str, Any]) -> None:
    assert upgrade["plan_after_cancel"] == {}
    assert upgrade["never"] < upgrade["height"]  # the chain went past it, and on to the next plan's height
    for home in upgrade["homes"]:
        assert 'UPGRADE "never"' not in (home / "gonkad.log").read_text(), home


def test_cosmovisor_switched_node0_to_the_new_release(upgrade: dict[str, Any]) -> None:
    home = upgrade["homes"][0]
    assert (home / "cosmovisor" / "current").resolve() == cosmovisor.release_dir(home, NAME).resolve()
    assert live_pid(pid_file(home, "cosmovisor"), "cosmovisor") is not None and gonkad_running(home)


def test_every_node_halts_at_the_plan_and_writes_upgrade_info(upgrade: dict[str, Any]) -> None:
    height = upgrade["height"]
    assert upgrade["plan"] == {"name": NAME, "height": str(height), "info": INFO}
    line = f'UPGRADE "{NAME}" NEEDED at height {height}: {INFO}'
    for home in upgrade["homes"]:
        log = (home / "gonkad.log").read_text()
        assert f"CRITICAL gonkad.upgrade: {line}" in log and f"halted: {line}" in log, home
        assert json.loads((home / "data" / "upgrade-info.json").read_text()) == {
            "name": NAME,
            "height": height,
            "info": INFO,
        }


def test_a_node_without_the_handler_refuses_to_start(upgrade: dict[str, Any]) -> None:
    refused = upgrade["refused"]
    assert refused.returncode == 1
    last = refused.stderr.strip().splitlines()[-1]
    assert last == f'Error: UPGRADE "{NAME}" NEEDED at height {upgrade["height"]}: this binary has no handler for it'


def test_the_upgraded_chain_goes_on_with_identical_app_hashes(upgrade: dict[str, Any]) -> None:
    net, height = upgrade["net"], upgrade["height"]
    rpcs = [CometRPC(n.rpc) for n in localnet.load(net.root).nodes]
    for h in range(height, height + 3):
        hashes = {rpc.block(h)["block"]["header"]["app_hash"] for rpc in rpcs}
        assert len(hashes) == 1, (h, hashes)
    versions = {v["name"]: int(v["version"]) for v in net.query("upgrade", "module-versions")["module_versions"]}
    assert versions["upgrade"] == 2 and {v for m, v in versions.items() if m != "upgrade"} == {1}
    assert net.query("upgrade", "applied", NAME) == {"height": str(height)}
    assert net.query("upgrade", "applied", f"{NAME}-migrated") == {"height": str(height)}
    assert net.query("upgrade", "plan") == {}
