"""Genesis export: a chain started from the state exported at a height has the same module state.

In process (``InProcessChain``): validators from gentxs, sends with fees, a new account, a learning run; then
``export_app_state`` at the latest and at an earlier height, a new chain from each, and the same export and
the same (key, value) pairs under every module's prefix. ``gonkad export`` on a stopped node's home, and
its one-line errors; on a real localnet in tests/test_export_localnet.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain

from gonkad import genesis
from gonkad.paths import app_db
from protogen.gonka.learning.v1 import tx_pb2 as learning_tx
from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import secp256k1
from sdk.store.commitstore import CommitStore
from x.genutil.gentx import build_gentx

CHAIN = "gonka-export"
ALICE, BOB = (secp256k1.PrivateKey(bytes([0x70 + i]) * 32) for i in range(2))
CAROL = address_of(secp256k1.PrivateKey(b"\x7c" * 32))  # only ever receives: an account without a key
FUNDS, STAKE = 5_000 * 10**9, 1_000 * 10**9
FEE = parse_coins("500ngonka")


def module_items(store: CommitStore, prefixes: list[bytes], version: int) -> list[tuple[bytes, bytes]]:
    """Every (key, value) under a module's prefix at ``version``; BaseApp's own keys are not module state."""
    return [(k, v) for k, v in store.items_at(version) if k.startswith(tuple(prefixes))]


def prefixes(chain: InProcessChain) -> list[bytes]:
    return [module.store_prefix for module in chain.app.modules]


class ActiveChain(InProcessChain):
    """Two validators by gentx (Alice, Bob), then blocks of signed transactions."""

    def __init__(self, path: Path) -> None:
        state = genesis.default_app_state()
        gentxs = [
            build_gentx(key, f"v{i}", bytes([i + 1]) * 32, ("ngonka", STAKE * (i + 1)), CHAIN)
            for i, key in enumerate((ALICE, BOB))
        ]
        state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
        super().__init__(
            path, {address_of(k): [("ngonka", FUNDS)] for k in (ALICE, BOB)}, chain_id=CHAIN, app_state=state
        )


def deliver(chain: InProcessChain, key: secp256k1.PrivateKey, *msgs: Any) -> None:
    """One block with one tx of ``msgs`` signed by ``key``, which must succeed."""
    account = chain.account(address_of(key))
    assert account is not None
    raw = sign_tx(key, list(msgs), CHAIN, account.account_number, account.sequence, FEE, 1_000_000)
    [result] = chain.block([raw]).tx_results
    assert result.code == 0, result.log


def learning_run(creator: secp256k1.PrivateKey, workers: list[str]) -> learning_tx.MsgCreateTrainingRun:
    digest = hashlib.sha256(b"config").digest()
    return learning_tx.MsgCreateTrainingRun(
        creator=address_of(creator),
        config_hash=digest,
        inner_steps=10,
        rounds=2,
        preset="tiny",
        initial_weights_hash=digest,
        workers=workers,
        budget="1000",
    )


@pytest.fixture
def active(tmp_path: Path) -> ActiveChain:
    """Heights 1-2 genesis and a send to a new account; 3-5 more sends, both ways, and a learning run."""
    chain = ActiveChain(tmp_path / "old")
    deliver(chain, ALICE, send_msg(address_of(ALICE), CAROL, parse_coins("7000ngonka")))
    deliver(chain, BOB, send_msg(address_of(BOB), address_of(ALICE), parse_coins("11ngonka")))
    deliver(
        chain,
        ALICE,
        send_msg(address_of(ALICE), address_of(BOB), parse_coins("13ngonka")),
        send_msg(address_of(ALICE), CAROL, parse_coins("1ngonka")),
    )
    deliver(chain, BOB, learning_run(BOB, [address_of(ALICE), address_of(BOB)]))
    return chain


def restarted(path: Path, exported: dict[str, Any], height: int) -> InProcessChain:
    """A new chain from an exported app_state, going on at ``height + 1`` as its genesis file says."""
    return InProcessChain(
        path, {}, chain_id=CHAIN, app_state=json.loads(json.dumps(exported)), initial_height=height + 1
    )


@pytest.mark.parametrize("at", ["latest", "earlier"])
def test_new_chain_from_export_has_identical_module_state(active: ActiveChain, tmp_path: Path, at: str) -> None:
    height = active.height if at == "latest" else 3
    exported = active.app.export_app_state(None if at == "latest" else height)
    assert set(exported) == {
        "auth",
        "bank",
        "epochs",
        "vesting",
        "stake",
        "bls",
        "slashing",
        "sprint",
        "pool",
        "rewards",
        "inference",
        "poc",
        "learning",
        "gov",
        "consensus",
        "upgrade",
        "genutil",
    }
    assert exported["genutil"] == {"gen_txs": []}
    versions = exported["upgrade"]["module_versions"]
    assert [v["name"] for v in versions] == sorted(exported) and {v["version"] for v in versions} == {"1"}
    assert len(exported["stake"]["hosts"]) == len(exported["stake"]["powers"]) == 2
    assert "number" not in exported["epochs"]["current"] and exported["epochs"]["current"]["start_height"] == "1"
    assert "signing_infos" not in exported["slashing"]  # no votes in process: no signing records yet
    assert len(exported["learning"].get("runs", [])) == (1 if at == "latest" else 0)
    with restarted(tmp_path / "new", exported, height) as new:
        assert new.height == height + 1  # the store's versions go on as block heights
        assert new.app.export_app_state() == exported
        assert module_items(new.app.store, prefixes(new), new.height) == module_items(
            active.app.store, prefixes(active), height
        )
        # CometBFT learns the validator set from InitChain, as it did from the gentxs
        old_set = sorted((v.pub_key.ed25519, v.power) for v in active.init_chain_response.validators)
        assert sorted((v.pub_key.ed25519, v.power) for v in new.init_chain_response.validators) == old_set
        # accounts keep number, sequence and key, so the chain goes on: their next txs verify
        alice = new.account(address_of(ALICE))
        assert alice is not None and alice.pub_key.value and alice.sequence > 0
        deliver(new, ALICE, send_msg(address_of(ALICE), CAROL, parse_coins("5ngonka")))
        fresh = address_of(secp256k1.PrivateKey(b"\x7d" * 32))
        deliver(new, BOB, send_msg(address_of(BOB), fresh, parse_coins("1ngonka")))
        carol, created = new.account(CAROL), new.account(fresh)
        # numbers go on after Carol's (and, at the latest height, the learning module account's: the run's escrow)
        assert carol is not None and created is not None
        assert created.account_number == carol.account_number + (2 if at == "latest" else 1)


def test_genesis_accounts_without_numbers_are_numbered_in_list_order(tmp_path: Path) -> None:
    """A new chain's genesis states no account numbers: they go 0, 1, … in list order, then the fee collector."""
    addresses = [address_of(secp256k1.PrivateKey(bytes([0x40 + i]) * 32)) for i in range(3)]
    with InProcessChain(tmp_path / "db", {a: [("ngonka", 1)] for a in addresses}) as chain:
        assert [chain.account(a).account_number for a in addresses] == [0, 1, 2]  # type: ignore[union-attr]
        exported = chain.app.export_app_state()["auth"]["accounts"]
        assert {a["@type"] for a in exported} == {
            "/cosmos.auth.v1beta1.BaseAccount",
            "/cosmos.auth.v1beta1.ModuleAccount",
        }
        assert sorted(
            int(a.get("account_number", a.get("base_account", {}).get("account_number", 0))) for a in exported
        ) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "edit, words",
    [
        ("double-account", "lists an account twice"),
        ("pool-short", "bonded collateral is 4000000000000 but bonded_tokens_pool holds 3000000000000"),
        ("stranger-power", "which is not a host"),
        ("stake-params", "power_reduction must be positive"),
    ],
)
def test_invalid_exported_genesis_is_refused(active: ActiveChain, tmp_path: Path, edit: str, words: str) -> None:
    state = json.loads(json.dumps(active.app.export_app_state()))
    if edit == "double-account":
        state["auth"]["accounts"].append(state["auth"]["accounts"][0])
    elif edit == "pool-short":
        state["stake"]["hosts"][0]["collateral"] = str(STAKE * 3)
    elif edit == "stranger-power":
        state["stake"]["powers"][0]["operator"] = CAROL
    elif edit == "stake-params":
        state["stake"]["params"]["power_reduction"] = "0"
    with pytest.raises(ValueError, match=words):
        restarted(tmp_path / "bad", state, active.height)


# --- gonkad export on a node home -----------------------------------------------------------------


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=120, env={**os.environ}
    )


NODE_GENESIS = {
    "genesis_time": "2026-01-02T03:04:05.123456Z",
    "chain_id": CHAIN,
    "initial_height": "1",
    "consensus_params": {"block": {"max_bytes": "22020096", "max_gas": "-1"}},
    "validators": [],
    "app_hash": "",
    "app_state": {},
}


def test_cli_export_writes_a_genesis_that_starts_the_same_chain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "genesis.json").write_text(json.dumps(NODE_GENESIS))
    app_db(home).parent.mkdir(parents=True)
    chain = ActiveChain(app_db(home))
    deliver(chain, ALICE, send_msg(address_of(ALICE), CAROL, parse_coins("9ngonka")))
    locked = gonkad("export", "--home", str(home))
    assert locked.returncode == 1 and locked.stdout == ""
    assert locked.stderr.count("\n") == 1 and "locked by a running node: stop it first" in locked.stderr
    assert chain.height == 2
    expected = {h: chain.app.export_app_state(h) for h in (1, 2)}
    chain.close()

    out = tmp_path / "exported.json"
    done = gonkad("export", "--home", str(home), "--height", "1", "--output", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["app_state"] == expected[1] != expected[2]
    assert (doc["chain_id"], doc["initial_height"], doc["validators"]) == (CHAIN, "2", [])
    assert (doc["genesis_time"], doc["consensus_params"]) == (
        NODE_GENESIS["genesis_time"],
        NODE_GENESIS["consensus_params"],
    )
    latest = gonkad("export", "--home", str(home))
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["app_state"] == expected[2]
    assert json.loads(latest.stdout)["initial_height"] == "3"
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "config").mkdir()
    (tmp_path / "g" / "config" / "genesis.json").write_text(out.read_text())
    valid = gonkad("genesis", "validate", "--home", str(tmp_path / "g"))
    assert valid.returncode == 0, valid.stderr


@pytest.mark.parametrize(
    "case, words",
    [
        ("no-home", "is not a node home"),
        ("future-height", "height 9 is not kept by this node: it keeps heights 1..2"),
        ("height-zero", "height 0 is not kept"),
        ("pruned", "height 2 is not kept by this node: it keeps heights 3..3"),
    ],
)
def test_cli_export_errors_are_one_line(tmp_path: Path, case: str, words: str) -> None:
    home = tmp_path / "home"
    if case != "no-home":
        (home / "config").mkdir(parents=True)
        (home / "config" / "genesis.json").write_text(json.dumps(NODE_GENESIS))
        app_db(home).parent.mkdir(parents=True)
        with InProcessChain(app_db(home), {}, chain_id=CHAIN) as chain:
            chain.block()
    if case == "pruned":
        with CommitStore(str(app_db(home)), keep_recent=1) as store:
            store.commit()
    height = {"future-height": ["--height", "9"], "height-zero": ["--height", "0"], "pruned": ["--height", "2"]}
    failed = gonkad("export", "--home", str(home), *height.get(case, []))
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and words in failed.stderr, failed.stderr
