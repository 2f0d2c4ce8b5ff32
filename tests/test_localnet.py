"""A real 4-validator network: agreement, a validator killed and restarted, gonkad killed mid-write, and
ICS23 proofs from a live node checked against the headers' app hashes."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from nodes import kill_node

from gonkad import localnet
from gonkad.paths import snapshot_dir
from sdk.client.proofs import ProofError, header_app_hash, proven_get, verify_proof_ops
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of, query_account, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import bech32, secp256k1
from sdk.snapshots.store import SnapshotStore
from x.bank import keys as bank_keys


def rpcs(root: Path) -> list[CometRPC]:
    return [CometRPC(n.rpc) for n in localnet.load(root).nodes]


def app_root(rpc: CometRPC, height: int) -> str:
    reply = rpc.abci_query("/app/root", height=height)
    assert reply.get("code", 0) == 0, reply
    return reply["value"].hex()


def assert_agreement(root: Path, up_to: int) -> None:
    """Every node's own store root at every height is the same, and matches the next block's header."""
    clients = rpcs(root)
    for height in range(1, up_to + 1):
        roots = {app_root(c, height) for c in clients}
        assert len(roots) == 1, f"app hashes differ at height {height}: {roots}"
        header_hash = clients[0].block(height + 1)["block"]["header"]["app_hash"].lower()
        assert header_hash == roots.pop(), f"header of block {height + 1} disagrees with the store"


def wait_caught_up(root: Path, name: str, timeout_s: float = 120) -> int:
    """Wait until ``name`` is at least as high as every other node was when we started waiting."""
    target = max(n["height"] or 0 for n in localnet.status(root)["nodes"])
    deadline = time.monotonic() + timeout_s
    while True:
        node = next(n for n in localnet.status(root)["nodes"] if n["name"] == name)
        if (node["height"] or 0) >= target and node["catching_up"] is False:
            return target
        assert time.monotonic() < deadline, f"{name} did not catch up to {target}: {node}"
        time.sleep(0.5)


class TxWriter(threading.Thread):
    """Keeps sending bank transfers through one node so that every block writes state."""

    def __init__(self, root: Path, rpc: CometRPC) -> None:
        super().__init__(daemon=True)
        self.rpc = rpc
        self.key = localnet.load_key(root, "faucet")
        self.chain_id = localnet.load(root).chain_id
        self.stop_event = threading.Event()
        self.accepted = 0

    def run(self) -> None:
        sender = address_of(self.key)
        rng = random.Random(7)
        account = query_account(self.rpc, sender)
        sequence = account.sequence
        while not self.stop_event.is_set():
            recipient = address_of(secp256k1.PrivateKey(rng.randbytes(32)))
            tx = sign_tx(
                self.key,
                [send_msg(sender, recipient, parse_coins("1000ngonka"))],
                self.chain_id,
                account.account_number,
                sequence,
            )
            try:
                result = self.rpc.broadcast_tx_sync(tx)
            except RPCError:
                time.sleep(0.2)
                continue
            if result["code"] == 0:
                sequence += 1
                self.accepted += 1
            else:
                time.sleep(0.2)
                sequence = query_account(self.rpc, sender).sequence
            time.sleep(0.02)


def test_four_validators_reach_height_20_and_agree(net4: Path) -> None:
    localnet.wait_for_height(net4, 21, timeout_s=180)
    shown = subprocess.run(
        [sys.executable, "-m", "gonkad", "localnet", "status", "--home", str(net4)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    status = json.loads(shown.stdout)
    assert status["chain_id"] == "gonka-test"
    for node in status["nodes"]:
        assert {"name", "home", "pids", "rpc", "grpc", "abci", "height", "app_hash", "catching_up", "peers"} <= set(
            node
        )
        assert node["peers"] == 3 and node["catching_up"] is False and node["height"] >= 21, node
        assert all(isinstance(pid, int) for pid in node["pids"].values()), node
    assert len({n["rpc"] for n in status["nodes"]} | {n["abci"] for n in status["nodes"]}) == 8  # distinct ports
    # status writes the chain-registry files into the localnet's folder and says where (test_chain_registry.py)
    assert {"chain.json", "assetlist.json"} <= set(status["chain_info"])
    chain = json.loads(Path(status["chain_info"]["chain.json"]).read_text())
    assert Path(status["chain_info"]["chain.json"]).parent == net4 and chain["chain_id"] == "gonka-test"
    assert [e["address"] for e in chain["apis"]["rpc"]] == [
        n["rpc"].replace("tcp://", "http://") for n in status["nodes"]
    ]
    assert_agreement(net4, 20)
    # Vote extensions are on (localnet/settings.toml), and the blocks above were made with them.
    params = CometRPC(status["nodes"][0]["rpc"]).call("consensus_params", height="21")["consensus_params"]
    assert params["abci"]["vote_extensions_enable_height"] == "1"
    assert_same_snapshots(net4, 10)


def assert_same_snapshots(root: Path, height: int, timeout_s: float = 30) -> None:
    """Every node snapshots each 10th height (app.toml ``[state_sync]``) into the same bytes, and
    ``gonkad snapshots list`` reads them beside the running node."""
    homes = [Path(n.home) for n in localnet.load(root).nodes]
    deadline = time.monotonic() + timeout_s
    while not all(SnapshotStore(snapshot_dir(home)).get(height) for home in homes):
        assert time.monotonic() < deadline, f"not every node has a snapshot of height {height}"
        time.sleep(0.5)
    infos = [SnapshotStore(snapshot_dir(home)).get(height) for home in homes]
    hashes = {info.hash.hex().upper() for info in infos if info is not None}
    assert len(hashes) == 1, f"snapshots of height {height} differ: {hashes}"
    listed = subprocess.run(
        [sys.executable, "-m", "gonkad", "snapshots", "list", "--home", str(homes[0])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert {"height": height, "hash": hashes.pop()}.items() <= next(
        s for s in json.loads(listed.stdout) if s["height"] == height
    ).items(), listed


def test_validator_killed_others_continue_then_it_catches_up(net4: Path) -> None:
    kill_node(net4, "node2", ("gonkad", "cometbft"))
    before = min(n["height"] or 10**9 for n in localnet.status(net4)["nodes"] if n["name"] != "node2")
    deadline = time.monotonic() + 60
    while min(n["height"] or 0 for n in localnet.status(net4)["nodes"] if n["name"] != "node2") < before + 5:
        assert time.monotonic() < deadline, "the three remaining validators stopped making blocks"
        time.sleep(0.5)
    assert localnet.start(net4, 4, "gonka-test") == ["node2"]
    height = wait_caught_up(net4, "node2")
    assert_agreement(net4, height - 1)


def test_gonkad_sigkilled_while_writing_recovers_same_app_hash(net4: Path) -> None:
    writer = TxWriter(net4, rpcs(net4)[0])
    writer.start()
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    try:
        for _ in range(5):
            time.sleep(rng.uniform(0.3, 3.0))
            kill_node(net4, "node3", ("gonkad",))
            assert localnet.start(net4, 4, "gonka-test") == ["node3"]
            wait_caught_up(net4, "node3")
    finally:
        writer.stop_event.set()
        writer.join(timeout=10)
    assert writer.accepted > 10, "the transaction writer did not get transactions in"
    height = wait_caught_up(net4, "node3")
    assert_agreement(net4, height - 1)


def test_proofs_from_a_live_node_verify_against_the_header_app_hash(net4: Path) -> None:
    """The state after block H is proven against header H+1's app hash, by the ics23 verifier: a balance
    that is there (existence) and one that is not (non-existence); a tampered proof, a wrong value or
    another height's app hash fail."""
    rpc = rpcs(net4)[1]
    faucet = address_of(localnet.load_key(net4, "faucet"))
    present = bank_keys.STORE_PREFIX + bank_keys.balance_key(bech32.decode(faucet), "ngonka")
    absent = bank_keys.STORE_PREFIX + bank_keys.balance_key(bech32.decode(faucet), "no-such-denom")
    height = rpc.height() - 1
    value = proven_get(rpc, present, height)
    assert value is not None and int(value) > 0
    assert proven_get(rpc, absent, height) is None

    app_hash = header_app_hash(rpc, height + 1)
    for key, expected in ((present, value), (absent, None)):
        ops = rpc.abci_query("/store/key", key, height=height, prove=True)["proofOps"]["ops"]
        verify_proof_ops(ops, key, expected, app_hash)
        data = bytearray(base64.b64decode(ops[0]["data"]))
        data[len(data) // 2] ^= 0x01
        tampered = [dict(ops[0], data=base64.b64encode(bytes(data)).decode())]
        with pytest.raises(ProofError, match="does not verify"):
            verify_proof_ops(tampered, key, expected, app_hash)
        with pytest.raises(ProofError, match="does not verify"):
            verify_proof_ops(ops, key, b"1" if expected is None else expected + b"0", app_hash)
        with pytest.raises(ProofError, match="another key"):
            verify_proof_ops(ops, key + b"x", expected, app_hash)
    other = header_app_hash(rpc, 2)  # the state after block 1
    assert other != app_hash
    ops = rpc.abci_query("/store/key", present, height=height, prove=True)["proofOps"]["ops"]
    with pytest.raises(ProofError, match="does not verify"):
        verify_proof_ops(ops, present, value, other)
