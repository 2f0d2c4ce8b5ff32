"""Invariants: checked after every block; a broken one is named, and a node checking them halts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from test_abci_server import FLUSH, Client, abci_only_home

from gonkad.paths import app_db
from sdk.client.process import stop_child
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1
from sdk.invariants import InvariantBroken
from x.bank import keys as bank_keys

ALICE = address_of(secp256k1.PrivateKey(b"\x21" * 32))
FUNDS = [("ngonka", 1000)]


def corrupt(chain: InProcessChain, key: bytes, value: bytes) -> None:
    """Write bank state behind the module's back, as a bug would, and commit it as a version."""
    chain.app.store.apply({bank_keys.STORE_PREFIX + key: value})
    chain.app.store.commit()


def test_invariants_hold_and_a_broken_one_is_named(tmp_path: Path) -> None:
    chain = InProcessChain(tmp_path / "db", {ALICE: FUNDS}, check_invariants=True)
    assert sorted(chain.app.invariants) == [
        "bank/nonnegative-balances",
        "bank/supply-accounted",
        "bank/total-supply",
        "bls/certificates-named-sets",
        "bls/indexes-agree",
        "gov/deposits-held",
        "inference/escrow-held",
        "inference/index-consistent",
        "learning/escrow-held",
        "learning/pending-indexed",
        "poc/queues-consistent",
        "poc/validators-drawn",
        "pool/balance-accounted",
        "rewards/minted-within-cap",
        "slashing/slashed-coins-settled",
        "sprint/results-add-up",
        "sprint/validations-committed",
        "stake/collateral-held",
        "stake/jailed-out-of-set",
        "stake/power-table-sent",
        "vesting/locked-held",
        "vesting/scheduled-accounted",
    ]
    chain.block()  # holds on a healthy chain
    corrupt(chain, bank_keys.balance_key(b"\x07" * 20, "ngonka"), b"5")
    with pytest.raises(InvariantBroken, match="bank/total-supply: supply of ngonka is 1000 but balances sum to 1005"):
        chain.finalize()
    chain.close()


def test_a_negative_balance_is_named(tmp_path: Path) -> None:
    chain = InProcessChain(tmp_path / "db", {ALICE: FUNDS}, check_invariants=True)
    corrupt(chain, bank_keys.balance_key(b"\x07" * 20, "ngonka"), b"-5")
    with pytest.raises(InvariantBroken) as broken:
        chain.finalize()
    assert broken.value.broken[0].startswith("bank/nonnegative-balances: balance ")
    chain.close()


def test_a_node_checking_invariants_halts_on_a_broken_one(tmp_path: Path) -> None:
    """``gonkad start --check-invariants`` over a store a bug corrupted: the next block is refused with the
    invariant's name (CometBFT stops on that answer) and the node exits with code 2 and says why."""
    home, abci_port = abci_only_home(tmp_path)
    chain = InProcessChain(app_db(home), {ALICE: FUNDS})
    corrupt(chain, bank_keys.supply_key("ngonka"), b"999")
    height = chain.height
    chain.close()
    node = subprocess.Popen(
        [sys.executable, "-m", "gonkad", "start", "--abci-only", "--check-invariants", "--home", str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:

        async def drive() -> abci.Response:
            client = await Client.connect_when_up(abci_port, 100)
            info = (await client.call(abci.Request(info=abci.RequestInfo()), FLUSH))[0].info
            assert info.last_block_height == height
            await client.send(abci.Request(finalize_block=abci.RequestFinalizeBlock(height=height + 1)), FLUSH)
            return (await client.read_until_eof())[0]  # the server closes the connection after an exception

        answer = asyncio.run(drive())
        assert "bank/total-supply: supply of ngonka is 999 but balances sum to 1000" in answer.exception.error
        output, _ = node.communicate(timeout=30)
        assert node.returncode == 2, output
        assert "halted: invariant broken after block" in output and "bank/total-supply" in output
    finally:
        stop_child(node, grace_s=5)
