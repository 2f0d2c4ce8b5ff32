"""Proof-of-Learning on chain: a DiLoCo run registered in x/learning on a real localnet with a budget, every round
committed by the workers' own keys (hosts val0 and val1, renamed worker0 and worker1), replay verdicts submitted by
the hosts drawn to verify (a honest one and one replaying tampered data), tampering found in every case, and
forged checkpoints refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from test_diloco import CONFIG, ROOT, TIMEOUTS, reorder_data, tamper_optimizer, tamper_weights, train

from diloco.chain import read_chain_run
from diloco.pol import find_record
from gonkad import localnet
from protogen.gonka.learning.v1 import learning_pb2
from sdk.client.tx import TxFailed
from sdk.client.txbuilder import address_of
from sdk.keyring.keyring import Keyring
from x.learning.client import LearningClient

WORKERS = ("worker0", "worker1")
HOSTS = ("val0", "val1", "val2", "val3")


def gonkad(*args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "gonkad", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_rounds_are_committed_verified_and_forgeries_refused_on_chain(net4: Path, tmp_path: Path) -> None:
    spec = localnet.load(net4)
    node = spec.nodes[0].rpc
    keyring = ["--keyring-home", str(net4), "--keyring-backend", "test"]
    keys = Keyring(net4, "test")
    for host, worker in zip(HOSTS, WORKERS):  # a run's workers are hosts; diloco signs with the worker's name
        armored = keys.export(host, "export")
        keys.delete(host)
        keys.import_key(worker, armored, "export")
    names = {address_of(keys.private_key(n)): n for n in (*WORKERS, *HOSTS[2:])}
    addresses = {name: address for address, name in names.items()}

    out = tmp_path / "run"
    summary = train(
        out,
        *CONFIG,
        "--rounds",
        "3",
        "--stop-after",
        "2",
        "--threads",
        "1",
        *TIMEOUTS,
        "--chain-node",
        node,
        *keyring,
        "--creator",
        "faucet",
        "--budget",
        "6000",
    )
    assert summary["rounds_done"] == 2
    registered = read_chain_run(out)
    assert registered is not None and registered.workers == {name: addresses[name] for name in WORKERS}
    client = LearningClient(node)
    run = client.run(registered.run_id)
    assert run["workers"] == [addresses[name] for name in WORKERS] and run["rounds"] == 3
    assert (run["budget"], run["paid"], run["refunded"]) == ("6000", "0", "0")
    for round_ in (0, 1):
        committed = {c["worker"]: c for c in client.checkpoints(registered.run_id, round_)}
        assert set(committed) == {addresses[name] for name in WORKERS}
        for name in WORKERS:
            local = find_record(out / "pol.jsonl", round_, name)
            assert committed[addresses[name]]["weights_hash"] == local.weights_hash
            assert committed[addresses[name]]["data_order_hash"] == local.data_hash

    def verify(run_dir: Path, checker: str | None) -> dict[str, Any]:
        """The replay's verdict, submitted by ``checker`` (None: judged only)."""
        submit = ["--submit", "--from", checker, "--chain-node", node, *keyring] if checker else []
        return gonkad("train", "verify", str(run_dir), "1", "worker0", *submit)

    drawn = client.checkpoint(registered.run_id, 1, addresses["worker0"])["verifiers"]
    honest, cheat = (names[v["address"]] for v in drawn)
    weights = {names[v["address"]]: v["weight"] for v in drawn}
    cases: list[tuple[Callable[[Path, int], None], str | None, str]] = [
        (tamper_weights, cheat, "start_weights_hash"),
        (tamper_optimizer, None, "start_optimizer_hash"),
        (reorder_data, None, "data_hash"),
    ]
    runs: dict[str, tuple[Path, str | None]] = {"honest": (out, honest)}
    for tamper, checker, reason in cases:
        runs[reason] = (tmp_path / reason, checker)
        shutil.copytree(out, runs[reason][0])
        tamper(runs[reason][0], 1)
    # The replays run side by side (their own copies): each one's start-up and each submission's wait for its
    # block overlap the others'.
    with ThreadPoolExecutor(len(runs)) as pool:
        answers = dict(zip(runs, pool.map(lambda case: verify(*case), runs.values())))
    assert answers["honest"]["valid"] is True and answers["honest"]["txhash"], answers["honest"]
    for _, _, reason in cases:
        verdict = answers[reason]
        assert verdict["valid"] is False and any(r.startswith(reason) for r in verdict["reasons"]), verdict

    verdicts = {v["verifier"]: v for v in client.verdicts(registered.run_id, 1, addresses["worker0"])}
    assert set(verdicts) == {addresses[honest], addresses[cheat]}
    assert verdicts[addresses[honest]].get("valid") is True and not verdicts[addresses[cheat]].get("valid")
    assert "start_weights_hash" in verdicts[addresses[cheat]]["reason"]
    settled = client.checkpoint(registered.run_id, 1, addresses["worker0"])
    assert (int(settled["valid_verdicts"]), int(settled["invalid_verdicts"])) == (1, 1)
    invalid = 2 * weights[cheat] > weights[cheat] + weights[honest]
    assert settled["outcome"] == (learning_pb2.OUTCOME_INVALID if invalid else learning_pb2.OUTCOME_VALID)

    # A forged checkpoint for round 2: worker0 claims to start from its own round-1 weights instead of the
    # global state the round agreed on. x/learning refuses it.
    record = find_record(out / "pol.jsonl", 1, "worker0")
    worker0 = keys.private_key("worker0")
    with pytest.raises(TxFailed) as forged:
        client.commit_checkpoint(
            worker0,
            registered.run_id,
            2,
            start_weights_hash=bytes.fromhex(record.weights_hash),
            weights_hash=bytes(32),
            optimizer_hash=bytes(32),
            data_order_hash=bytes(32),
            config_hash=bytes.fromhex(record.config_hash),
            global_weights_hash=bytes(32),
            outer_momentum_hash=bytes(32),
        )
    assert (forged.value.codespace, forged.value.code) == ("learning", 10)
