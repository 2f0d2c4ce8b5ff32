"""Genesis: gentxs create the validator set at InitChain; the CLI builds and checks a genesis file."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chain import InProcessChain

from gonkad import genesis
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from x.auth.keys import module_address
from x.genutil.gentx import build_gentx
from x.stake.keys import BONDED_POOL

CHAIN = "gonka-genesis"
OPERATORS = [secp256k1.PrivateKey(bytes([0x50 + i]) * 32) for i in range(2)]
FUNDS, STAKE = 5_000 * 10**9, 1_000 * 10**9


def init(tmp_path: Path, gen_txs: list[bytes]) -> InProcessChain:
    """Every operator funded, the gentxs in genutil; block 1 commits the genesis state."""
    state = genesis.default_app_state()
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gen_txs]}
    return InProcessChain(
        tmp_path / "db", {address_of(key): [("ngonka", FUNDS)] for key in OPERATORS}, chain_id=CHAIN, app_state=state
    )


def test_gentxs_set_validators_and_bond_collateral(tmp_path: Path) -> None:
    pubkeys = [bytes([i + 1]) * 32 for i in range(2)]
    txs = [build_gentx(key, f"v{i}", pubkeys[i], ("ngonka", STAKE * (i + 1)), CHAIN) for i, key in enumerate(OPERATORS)]
    chain = init(tmp_path, txs)
    response = chain.init_chain_response
    # epoch 0's weights are collateral in GNK (1000, 2000); two hosts may hold at most half the power each, so
    # the larger is capped at the smaller (x/stake README, Voting power)
    assert sorted((v.pub_key.ed25519, v.power) for v in response.validators) == [(pubkeys[0], 1000), (pubkeys[1], 1000)]
    assert chain.balance(secp256k1.address_bytes(OPERATORS[0].public_key)) == FUNDS - STAKE
    assert chain.balance(secp256k1.address_bytes(OPERATORS[1].public_key)) == FUNDS - 2 * STAKE
    assert chain.balance(module_address(BONDED_POOL)) == 3 * STAKE


@pytest.mark.parametrize(
    "make, words",
    [
        (
            lambda: [build_gentx(OPERATORS[0], "v", b"\x01" * 32, ("ngonka", STAKE), "another-chain")],
            "signature verification failed",
        ),
        (
            lambda: [
                build_gentx(OPERATORS[0], "v", b"\x01" * 32, ("ngonka", STAKE), CHAIN),
                build_gentx(OPERATORS[1], "w", b"\x01" * 32, ("ngonka", STAKE), CHAIN),
            ],
            "another host signs with this consensus key",
        ),
        (lambda: [build_gentx(OPERATORS[0], "v", b"\x01" * 32, ("ngonka", FUNDS * 2), CHAIN)], "insufficient funds"),
        (lambda: [build_gentx(OPERATORS[0], "v", b"\x01" * 32, ("ngonka", 10), CHAIN)], "no power"),
    ],
    ids=["wrong-chain", "duplicate-consensus-key", "stake-above-balance", "stake-below-1-gnk"],
)
def test_invalid_gentx_rejects_the_genesis(tmp_path: Path, make, words: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=words):
        init(tmp_path, make())


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"}
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60, env=env)


def test_cli_init_fund_gentx_collect_validate(tmp_path: Path) -> None:
    home = str(tmp_path / "node")
    common = ["--home", home]
    assert gonkad("init", "n0", "--chain-id", CHAIN, *common).returncode == 0
    added = gonkad("keys", "add", "op", "--keyring-backend", "test", "--output", "json", *common)
    assert added.returncode == 0, added.stderr
    address = json.loads(added.stdout)["address"]
    steps = [
        ["genesis", "add-genesis-account", "op", "2000000000000ngonka", "--keyring-backend", "test"],
        ["genesis", "gentx", "op", "1000000000000ngonka", "--keyring-backend", "test"],
        ["genesis", "collect-gentxs"],
        ["genesis", "validate"],
    ]
    for step in steps:
        result = gonkad(*step, *common)
        assert result.returncode == 0, (step, result.stderr)
    assert "valid genesis file" in result.stdout
    doc = json.loads((tmp_path / "node" / "config" / "genesis.json").read_text())
    assert doc["validators"] == [] and len(doc["app_state"]["genutil"]["gen_txs"]) == 1
    assert doc["app_state"]["bank"]["balances"][0]["address"] == address
    bech32.decode(address)
    doc["app_state"]["genutil"]["gen_txs"][0] = base64.b64encode(b"not a tx").decode()
    (tmp_path / "node" / "config" / "genesis.json").write_text(json.dumps(doc))
    broken = gonkad("genesis", "validate", *common)
    assert broken.returncode == 1 and "gentx 0 failed" in broken.stderr and len(broken.stderr.strip().splitlines()) == 1
