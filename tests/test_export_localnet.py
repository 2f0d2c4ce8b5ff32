"""``gonkad export`` of a real node: a 1-validator localnet with bank sends, stopped, exported at a height;
a chain from that genesis has the same module state, in process and as a new CometBFT + gonkad network."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chain import InProcessChain

from gonkad import localnet
from gonkad.paths import app_db
from sdk.client.rpc import CometRPC
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1
from sdk.store.commitstore import CommitStore
from x.bls import keys as bls_keys
from x.bls.keyfile import key_file
from x.vesting import keys as vesting_keys

CHAIN = "gonka-export-net"
RECIPIENTS = [address_of(secp256k1.PrivateKey(bytes([0x90 + i]) * 32)) for i in range(2)]


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def stopped_net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A 1-validator localnet after two CLI sends, stopped; and the height of the first send's block."""
    root = tmp_path_factory.mktemp("export-net")
    try:
        localnet.start(root, validators=1, chain_id=CHAIN)
        localnet.wait_for_height(root, 2, timeout_s=120)
        node = localnet.load(root).nodes[0]
        heights = []
        for i, recipient in enumerate(RECIPIENTS):
            sent = gonkad(
                "tx",
                "bank",
                "send",
                "faucet",
                recipient,
                f"{1000 + i}ngonka",
                "--fees",
                "500ngonka",
                "--home",
                str(root),
                "--keyring-backend",
                "test",
                "--node",
                node.rpc,
                "-y",
                "--output",
                "json",
            )
            assert sent.returncode == 0, sent.stderr
            assert json.loads(sent.stdout)["code"] == 0, sent.stdout
            heights.append(wait_for_tx(CometRPC(node.rpc), json.loads(sent.stdout)["txhash"]))
        locked = gonkad("export", "--home", node.home)
        assert locked.returncode == 1 and "locked by a running node" in locked.stderr, locked.stderr
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)
    yield root, heights[0]


def wait_for_tx(rpc: CometRPC, txhash: str, timeout_s: float = 60) -> int:
    """The height of the block that committed the tx."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return int(rpc.tx(bytes.fromhex(txhash))["height"])
        except Exception:  # noqa: BLE001 - not indexed yet
            assert time.monotonic() < deadline, f"tx {txhash} was not committed"
            time.sleep(0.3)


def test_export_at_a_height_starts_a_chain_with_the_same_module_state(
    stopped_net: tuple[Path, int], tmp_path: Path
) -> None:
    root, height = stopped_net
    home = Path(localnet.load(root).nodes[0].home)
    out = tmp_path / "genesis.json"
    done = gonkad("export", "--home", str(home), "--height", str(height), "--output", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    node_genesis = json.loads((home / "config" / "genesis.json").read_text())
    assert (doc["chain_id"], doc["initial_height"]) == (CHAIN, str(height + 1))
    assert (doc["genesis_time"], doc["consensus_params"]) == (
        node_genesis["genesis_time"],
        node_genesis["consensus_params"],
    )
    assert doc["validators"] == [] and doc["app_state"]["genutil"] == {"gen_txs": []}
    balances = {b["address"]: b["coins"] for b in doc["app_state"]["bank"]["balances"]}
    assert balances.get(RECIPIENTS[0]) == [{"denom": "ngonka", "amount": "1000"}]
    assert RECIPIENTS[1] not in balances  # sent in a later block than the export's

    with InProcessChain(
        tmp_path / "new", {}, chain_id=CHAIN, app_state=doc["app_state"], initial_height=height + 1
    ) as new:
        prefixes = tuple(module.store_prefix for module in new.app.modules)
        # x/vesting keeps the last block's time: the new chain's first block (in process, time 0) has its own;
        # x/bls's certificates are the old chain's history, not exported (a new chain certifies its own blocks)
        block_time = vesting_keys.STORE_PREFIX + vesting_keys.LAST_BLOCK_TIME_KEY
        history = tuple(bls_keys.STORE_PREFIX + p for p in bls_keys.HISTORY_PREFIXES)

        def carried(key: bytes) -> bool:
            return key.startswith(prefixes) and key != block_time and not key.startswith(history)

        with CommitStore(str(app_db(home))) as old:
            items = old.items_at(height)
        expected = [(k, v) for k, v in items if carried(k)]
        assert any(k.startswith(history) for k, _ in items)  # the old chain did certify its blocks
        assert [(k, v) for k, v in new.app.store.items_at(new.height) if carried(k)] == expected
        exported, original = new.app.export_app_state(), json.loads(json.dumps(doc["app_state"]))
        for state in (exported, original):  # the last block time again (see above)
            state["vesting"].pop("last_block_time_ns", None)
        assert exported == original
        [validator] = new.init_chain_response.validators
        assert validator.power == localnet.load_settings().validator_stake_ngonka // 10**9


def test_a_new_network_from_the_exported_genesis_makes_blocks(stopped_net: tuple[Path, int], tmp_path: Path) -> None:
    """The same validator (its consensus key copied) runs a fresh node from the export: blocks go on at
    ``initial_height`` with the validator set InitChain returned from x/stake."""
    root, _ = stopped_net
    old_home = Path(localnet.load(root).nodes[0].home)
    latest = gonkad("export", "--home", str(old_home))
    assert latest.returncode == 0, latest.stderr
    doc = json.loads(latest.stdout)
    start = int(doc["initial_height"])
    new_root = tmp_path / "net"
    home = Path(localnet.build(new_root, validators=1, chain_id=CHAIN).nodes[0].home)
    (home / "config" / "genesis.json").write_text(latest.stdout)
    for key in ("priv_validator_key.json", key_file(Path()).name):  # a validator's consensus and BLS keys
        shutil.copy(old_home / "config" / key, home / "config" / key)
    try:
        localnet.start(new_root)
        localnet.wait_for_height(new_root, start + 1, timeout_s=120)
        rpc = CometRPC(localnet.load(new_root).nodes[0].rpc)
        [validator] = rpc.call("validators", height=str(start))["validators"]
        [exported] = doc["app_state"]["stake"]["hosts"]
        [power] = doc["app_state"]["stake"]["powers"]
        assert validator["pub_key"]["value"] == exported["consensus_pubkey"]
        assert power["operator"] == exported["operator"]
        assert int(validator["voting_power"]) == int(power["weight"]) == int(exported["collateral"]) // 10**9
        assert int(rpc.status()["sync_info"]["earliest_block_height"]) == start
    finally:
        localnet.stop(new_root)
