"""Proof-of-Learning on chain: a DiLoCo run registered in x/learning on a real localnet, every round
committed by the workers' own keys, replay verdicts submitted, and forged checkpoints refused."""

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
from sdk.client.querier import Querier
from sdk.client.tx import TxFailed, TxOptions, deliver
from sdk.client.txbuilder import address_of, send_msg
from sdk.coins import parse_coins
from x.learning.client import LearningClient

WORKERS = ("worker0", "worker1")
CHECKERS = ("checker0", "checker1", "checker2", "checker3")


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
    addresses = {
        name: gonkad("keys", "add", name, "--home", str(net4), "--keyring-backend", "test", "--output", "json")[
            "address"
        ]
        for name in (*WORKERS, *CHECKERS)
    }
    faucet = localnet.load_key(net4, "faucet")
    deliver(
        Querier(node),
        faucet,
        [send_msg(address_of(faucet), a, parse_coins("10000000ngonka")) for a in addresses.values()],
        spec.chain_id,
        TxOptions(gas="600000"),
    )

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
    )
    assert summary["rounds_done"] == 2
    registered = read_chain_run(out)
    assert registered is not None and registered.workers == {name: addresses[name] for name in WORKERS}
    client = LearningClient(node)
    run = client.run(registered.run_id)
    assert run["workers"] == [addresses[name] for name in WORKERS] and run["rounds"] == 3
    for round_ in (0, 1):
        committed = {c["worker"]: c for c in client.checkpoints(registered.run_id, round_)}
        assert set(committed) == {addresses[name] for name in WORKERS}
        for name in WORKERS:
            local = find_record(out / "pol.jsonl", round_, name)
            assert committed[addresses[name]]["weights_hash"] == local.weights_hash
            assert committed[addresses[name]]["data_order_hash"] == local.data_hash

    def verify(run_dir: Path, checker: str) -> dict[str, Any]:
        return gonkad(
            "train",
            "verify",
            str(run_dir),
            "1",
            "worker0",
            "--submit",
            "--from",
            checker,
            "--chain-node",
            node,
            *keyring,
        )

    cases: list[tuple[Callable[[Path, int], None], str, str]] = [
        (tamper_weights, "checker1", "start_weights_hash"),
        (tamper_optimizer, "checker2", "start_optimizer_hash"),
        (reorder_data, "checker3", "data_hash"),
    ]
    runs = {"checker0": out}
    for tamper, checker, _ in cases:
        runs[checker] = tmp_path / checker
        shutil.copytree(out, runs[checker])
        tamper(runs[checker], 1)
    # The four checkers replay and submit side by side (their own keys and copies): each replay's start-up
    # and each submission's wait for its block overlap the others'.
    with ThreadPoolExecutor(len(runs)) as pool:
        answers = dict(zip(runs, pool.map(verify, runs.values(), runs)))
    honest = answers["checker0"]
    assert honest["valid"] is True and honest["txhash"], honest
    for _, checker, reason in cases:
        verdict = answers[checker]
        assert verdict["valid"] is False and any(r.startswith(reason) for r in verdict["reasons"]), verdict

    verdicts = {v["verifier"]: v for v in client.verdicts(registered.run_id, 1, addresses["worker0"])}
    assert set(verdicts) == {addresses[c] for c in CHECKERS}
    assert verdicts[addresses["checker0"]].get("valid") is True
    assert all(not verdicts[addresses[c]].get("valid") for c in CHECKERS[1:])
    assert "start_weights_hash" in verdicts[addresses["checker1"]]["reason"]
    tallies = client.checkpoint(registered.run_id, 1, addresses["worker0"])
    assert (int(tallies["valid_verdicts"]), int(tallies["invalid_verdicts"])) == (1, 3)

    # A forged checkpoint for round 2: worker0 claims to start from its own round-1 weights instead of the
    # global state the round agreed on. x/learning refuses it.
    record = find_record(out / "pol.jsonl", 1, "worker0")
    worker0 = localnet.load_key(net4, "worker0")
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
