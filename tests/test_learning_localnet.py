"""x/learning on a real 4-validator network, through the CLI and the Python client: two workers (hosts val0 and
val1) over two rounds of a run with a budget, a forged and an unauthorised commit refused with their codes, a
verdict from a host not drawn refused, the drawn verifiers' verdicts seen over ABCI query and gRPC, and the
worker's share claimed once its checkpoint settled VALID."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gonkad import localnet
from protogen.gonka.learning.v1 import learning_pb2
from sdk.client.querier import Querier
from sdk.client.tx import TxFailed, TxOptions, deliver, wait_for_tx
from sdk.client.txbuilder import address_of, send_msg
from sdk.coins import parse_coins
from x.learning.cli import flag
from x.learning.client import LearningClient

LEARNERS = ("val0", "val1")
"""Hosts of the localnet: a run's workers must be."""
BUDGET = 4 * 1000 + 3


def h(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def hashes(name: str, round_: int, **overrides: bytes) -> dict[str, bytes]:
    """``name``'s honest checkpoint for a round: it starts from the previous round's global weights."""
    return {
        "start_weights_hash": h("initial") if round_ == 0 else h(f"global {round_ - 1}"),
        "weights_hash": h(f"weights {round_} {name}"),
        "optimizer_hash": h(f"optimizer {round_} {name}"),
        "data_order_hash": h(f"data {round_} {name}"),
        "config_hash": h("config"),
        "global_weights_hash": h(f"global {round_}"),
        "outer_momentum_hash": h(f"momentum {round_}"),
        **overrides,
    }


def gonkad(*args: str) -> Any:
    """The JSON a successful ``gonkad`` command prints."""
    result = subprocess.run(
        [sys.executable, "-m", "gonkad", *args, "--output", "json"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr or result.stdout
    return json.loads(result.stdout)


def cli_tx(root: Path, node: str, *args: str, gas: str = "auto") -> dict[str, Any]:
    """``gonkad tx learning ARGS``, admitted to the mempool, then its result in the block."""
    sent = gonkad(
        "tx",
        "learning",
        *args,
        "--gas",
        gas,
        "--gas-adjustment",
        "1.5",
        "--home",
        str(root),
        "--keyring-backend",
        "test",
        "--node",
        node,
        "-y",
    )
    assert sent["code"] == 0, sent
    return dict(wait_for_tx(Querier(node), sent["txhash"], 60)["tx_result"])


def succeeded(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("code"), result.get("log")
    return result


def commit_args(run_id: int, round_: int, values: dict[str, bytes], key: str) -> list[str]:
    return [
        "commit-checkpoint",
        str(run_id),
        str(round_),
        "--from",
        key,
        *(arg for field, value in values.items() for arg in (flag(field), value.hex())),
    ]


def test_training_run_commits_forgeries_and_verdicts(net4: Path) -> None:
    spec = localnet.load(net4)
    node, grpc_addr = spec.nodes[0].rpc, f"127.0.0.1:{spec.nodes[1].grpc_port}"
    gonkad("keys", "add", "intruder", "--home", str(net4), "--keyring-backend", "test")
    hosts = [f"val{i}" for i in range(4)]
    keys = {name: localnet.load_key(net4, name) for name in (*hosts, "intruder")}
    addresses = {name: address_of(key) for name, key in keys.items()}
    faucet = localnet.load_key(net4, "faucet")
    deliver(
        Querier(node),
        faucet,
        [send_msg(address_of(faucet), a, parse_coins("10000000ngonka")) for a in addresses.values()],
        spec.chain_id,
        TxOptions(gas="400000"),
    )
    workers = [addresses[name] for name in LEARNERS]

    created = succeeded(
        cli_tx(
            net4,
            node,
            "create-run",
            "--config-hash",
            h("config").hex(),
            "--initial-weights-hash",
            h("initial").hex(),
            "--workers",
            ",".join(workers),
            "--inner-steps",
            "4",
            "--rounds",
            "2",
            "--preset",
            "tiny",
            "--budget",
            str(BUDGET),
            "--from",
            "faucet",
        )
    )
    [event] = [e for e in created["events"] if e["type"] == "create_run"]
    run_id = int({a["key"]: a["value"] for a in event["attributes"]}["run_id"])
    client = LearningClient(node)
    succeeded(cli_tx(net4, node, *commit_args(run_id, 0, hashes("val0", 0), "val0")))
    client.commit_checkpoint(keys["val1"], run_id, 0, **hashes("val1", 0))

    forged = hashes("val0", 1, start_weights_hash=h("weights 0 val0"))  # its own weights, not the global
    refused = cli_tx(net4, node, *commit_args(run_id, 1, forged, "val0"), gas="300000")
    assert (refused["codespace"], refused["code"]) == ("learning", 10), refused
    assert "start weights do not chain from the agreed global state" in refused["log"]
    with pytest.raises(TxFailed) as forged_by_client:
        client.commit_checkpoint(keys["val1"], run_id, 1, **hashes("val1", 1, start_weights_hash=h("x")))
    assert (forged_by_client.value.codespace, forged_by_client.value.code) == ("learning", 10)
    with pytest.raises(TxFailed) as intruding:
        client.commit_checkpoint(keys["intruder"], run_id, 0, **hashes("intruder", 0))
    assert (intruding.value.codespace, intruding.value.code) == ("learning", 6)

    client.commit_checkpoint(keys["val0"], run_id, 1, **hashes("val0", 1))
    succeeded(cli_tx(net4, node, *commit_args(run_id, 1, hashes("val1", 1), "val1")))
    drawn = [v["address"] for v in client.checkpoint(run_id, 0, workers[0])["verifiers"]]
    assert len(drawn) == 2 and set(drawn) < {addresses[n] for n in hosts[1:]}
    verifier, second = (next(n for n in hosts if addresses[n] == a) for a in drawn)
    replay = {"replay_weights_hash": h("weights 0 val0"), "replay_optimizer_hash": h("optimizer 0 val0")}
    with pytest.raises(TxFailed) as not_drawn:
        client.submit_verdict(keys["intruder"], run_id, 0, workers[0], True, **replay)
    assert (not_drawn.value.codespace, not_drawn.value.code) == ("learning", 17)
    succeeded(
        cli_tx(
            net4,
            node,
            "submit-verdict",
            str(run_id),
            "0",
            workers[0],
            "valid",
            "--replay-weights-hash",
            h("weights 0 val0").hex(),
            "--replay-optimizer-hash",
            h("optimizer 0 val0").hex(),
            "--reason",
            "replayed",
            "--from",
            verifier,
        )
    )
    client.submit_verdict(keys[second], run_id, 0, workers[0], True, **replay)
    over_abci = gonkad("query", "learning", "verdicts", str(run_id), "0", workers[0], "--node", node)
    over_grpc = gonkad("query", "learning", "verdicts", str(run_id), "0", workers[0], "--grpc-addr", grpc_addr)
    assert over_abci == over_grpc
    [shown] = [v for v in over_grpc["verdicts"] if v["verifier"] == addresses[verifier]]
    assert (shown["valid"], shown["reason"]) == (True, "replayed")
    by_grpc = LearningClient(node, grpc_addr=grpc_addr)
    settled = by_grpc.checkpoint(run_id, 0, workers[0])
    assert settled["valid_verdicts"] == 2 and settled["outcome"] == learning_pb2.OUTCOME_VALID
    assert by_grpc.verdicts(run_id, 0, workers[0]) == over_abci["verdicts"]
    for round_ in (0, 1):
        committed = by_grpc.checkpoints(run_id, round_)
        assert sorted(c["worker"] for c in committed) == sorted(workers)
        assert {c["global_weights_hash"] for c in committed} == {h(f"global {round_}").hex()}
    assert client.run(run_id)["workers"] == workers
    succeeded(cli_tx(net4, node, "claim", str(run_id), "0", "--from", "val0"))
    assert client.run(run_id)["paid"] == str(BUDGET // 4)
    with pytest.raises(TxFailed) as twice:
        client.claim(keys["val0"], run_id, 0)
    assert (twice.value.codespace, twice.value.code) == ("learning", 20)
