"""Joining a running network by state sync (sdk/snapshots, gonkad/statesync.py), on a real 4-validator network
with snapshots on, one network for the module, its tests in order:
(a) node4 joins with CometBFT's state sync, trusting node0's latest block: it restores a snapshot its peers serve
    (it holds no block below the snapshot's height), node3 serves tampered chunks and node4 refuses them and
    rejects node3 as a sender, and the restore completes from node0;
(b) from the snapshot's height on, node4's own store root at every height equals every other node's and the next
    header's app hash, and a balance read from node4 with a proof verifies against the header's app hash;
(c) node4's operator bonds (``gonkad tx stake create-validator``): node4 is in the validator set from its
    set-validators height + 2 on and its precommits are in the commits.
Epochs of 10 blocks (epoch n ≥ 1 starts at 1 + 10n, set validators at offset 4); snapshots every 20 heights in
chunks of 1 KiB, so a restore takes many chunks and node3 is asked for some of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chain_reads import wait_height
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from nodes import bond_validator, running_localnet

from gonkad import genesis, localnet
from gonkad.config import edit_cometbft_config, load_app_config, save_app_config, snapshot_store
from sdk.client.proofs import proven_get
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.tx import TxOptions, deliver
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from x.bank import keys as bank_keys

EPOCH_LENGTH, RACE_VALIDATION, SET_VALIDATORS, INFERENCE = 10, 2, 4, 5
SNAPSHOT_INTERVAL, CHUNK_BYTES, KEEP_RECENT = 20, 1024, 20
"""Snapshots every 20 heights: node4 starts just after one that every node holds, so no newer one (held by one
peer only) appears while it asks its peers; each lives 400 heights, so a refetched chunk is still there."""
OVERRIDES = {
    "epochs": {
        "params": {
            "epoch_length": str(EPOCH_LENGTH),
            "race_validation_offset": str(RACE_VALIDATION),
            "set_validators_offset": str(SET_VALIDATORS),
            "inference_offset": str(INFERENCE),
        }
    },
    "slashing": {"params": {"signed_blocks_window": "1000000"}},
}
_base = localnet.load_settings(validators=4, chain_id="gonka-statesync-net")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
RECIPIENTS = [address_of(secp256k1.PrivateKey(bytes([0x40 + i]) * 32)) for i in range(20)]
BLOCK_ID_FLAG_COMMIT = 2


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("statesync-net")
    spec = localnet.build(root, settings=SETTINGS)
    for node in spec.nodes:
        home = Path(node.home)
        config = load_app_config(home)
        state_sync = config.state_sync.model_copy(
            update={
                "snapshot_interval": SNAPSHOT_INTERVAL,
                "snapshot_keep_recent": KEEP_RECENT,
                "snapshot_chunk_bytes": CHUNK_BYTES,
                "test_fault": "tamper-chunks" if node.name == "node3" else "",
            }
        )
        save_app_config(home, config.model_copy(update={"state_sync": state_sync}))
    yield from running_localnet(root, SETTINGS)  # started and stopped (whatever happens), node4 included


def node(root: Path, name: str) -> localnet.NodeSpec:
    return next(n for n in localnet.load(root).nodes if n.name == name)


def app_root(rpc: CometRPC, height: int) -> str:
    reply = rpc.abci_query("/app/root", height=height)
    assert reply.get("code", 0) == 0, reply
    return str(reply["value"].hex())


def wait_for_fresh_snapshot(homes: list[Path], rpc: CometRPC, timeout_s: float = 120.0) -> int:
    """A snapshot height S that every node of ``homes`` holds, the chain at most 3 heights past it: the newest
    snapshot any of them can offer a node started now, on every one of them."""
    deadline = time.monotonic() + timeout_s
    while True:
        height = rpc.height()
        latest = height - height % SNAPSHOT_INTERVAL
        if latest and height - latest <= 3 and all(snapshot_store(h, load_app_config(h)).get(latest) for h in homes):
            return latest
        assert time.monotonic() < deadline, "no snapshot height that every node holds"
        time.sleep(0.1)


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"}
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60, env=env)


def test_a_node_joins_by_state_sync_and_refuses_the_peer_that_tampers_chunks(net: Path) -> None:
    spec = localnet.load(net)
    rpc0 = CometRPC(node(net, "node0").rpc)
    faucet = localnet.load_key(net, "faucet")
    querier = Querier(node(net, "node0").rpc)
    sends = [
        bank_tx.MsgSend(
            from_address=address_of(faucet),
            to_address=to,
            amount=[coin_pb2.Coin(denom="ngonka", amount=str(1000 + i))],
        )
        for i, to in enumerate(RECIPIENTS)
    ]
    committed = deliver(querier, faucet, sends, spec.chain_id, TxOptions(gas="auto", gas_adjustment="1.5"))
    wait_height(rpc0, max(int(committed.height), SNAPSHOT_INTERVAL) + 1)
    listed = gonkad("snapshots", "list", "--home", node(net, "node0").home)
    assert listed.returncode == 0, listed.stderr
    heights = [int(s["height"]) for s in json.loads(listed.stdout)]
    assert heights and all(h % SNAPSHOT_INTERVAL == 0 for h in heights), heights

    validators = [Path(n.home) for n in spec.nodes]
    node4 = localnet.add_node(net, "node4", SETTINGS, state_sync=True)
    node3, node0 = node(net, "node3"), node(net, "node0")
    # node4 meets node0 and node3 only, so node3 is asked for about half of the chunks
    peers = ",".join(f"{n.node_id}@127.0.0.1:{n.p2p_port}" for n in (node0, node3))
    edit_cometbft_config(Path(node4.home), {"p2p": {"persistent_peers": peers, "pex": False}})
    config = load_app_config(Path(node4.home))
    chunked = config.state_sync.model_copy(update={"snapshot_chunk_bytes": CHUNK_BYTES})
    save_app_config(Path(node4.home), config.model_copy(update={"state_sync": chunked}))
    wait_for_fresh_snapshot(validators, rpc0)
    localnet.start_node(node4)
    rpc4 = CometRPC(node4.rpc)
    deadline = time.monotonic() + 120
    while True:
        try:
            status = rpc4.status()["sync_info"]
            if not status["catching_up"] and int(status["latest_block_height"]) >= rpc0.height() - 1:
                break
        except RPCError:
            pass
        assert time.monotonic() < deadline, "node4 did not join"
        time.sleep(0.5)
    earliest = int(status["earliest_block_height"])
    assert earliest > SNAPSHOT_INTERVAL and (earliest - 1) % SNAPSHOT_INTERVAL == 0, status  # restored, not replayed
    log = (Path(node4.home) / "gonkad.log").read_text()
    refused = [line for line in log.splitlines() if "snapshot chunk" in line and "refused" in line]
    assert refused and all(node3.node_id in line for line in refused), refused


def test_the_joined_node_agrees_on_every_later_app_hash_and_proves_balances(net: Path) -> None:
    rpcs = [CometRPC(n.rpc) for n in localnet.load(net).nodes]
    rpc4 = rpcs[-1]
    earliest = int(rpc4.status()["sync_info"]["earliest_block_height"])
    top = wait_height(rpc4, earliest + 8) - 1
    for height in range(earliest, top):
        roots = {app_root(rpc, height) for rpc in rpcs}
        assert len(roots) == 1, f"app hashes differ at height {height}: {roots}"
        assert rpcs[0].block(height + 1)["block"]["header"]["app_hash"].lower() == roots.pop()
    key = bank_keys.STORE_PREFIX + bank_keys.balance_key(bech32.decode(RECIPIENTS[3]), "ngonka")
    assert proven_get(rpc4, key, top) == b"1003"
    absent = bank_keys.STORE_PREFIX + bank_keys.balance_key(bech32.decode(RECIPIENTS[3]), "no-such-denom")
    assert proven_get(rpc4, absent, top) is None


def test_the_joined_node_takes_part_in_consensus_once_it_is_a_validator(net: Path) -> None:
    node4 = node(net, "node4")
    rpc0 = CometRPC(node(net, "node0").rpc)
    _, after = bond_validator(net, node4, SETTINGS.validator_stake_ngonka)
    n = 1
    while 1 + n * EPOCH_LENGTH + SET_VALIDATORS <= after:
        n += 1
    joins = 1 + n * EPOCH_LENGTH + SET_VALIDATORS + 2
    wait_height(rpc0, joins + 5, timeout_s=120)
    address = json.loads((Path(node4.home) / "config" / "priv_validator_key.json").read_text())["address"].upper()
    in_comet = {v["address"].upper() for v in rpc0.call("validators", height=str(joins), per_page="100")["validators"]}
    assert address in in_comet and len(in_comet) == 5
    commits = [rpc0.block(h + 1)["block"]["last_commit"]["signatures"] for h in range(joins + 1, joins + 5)]
    flags = [
        next((s["block_id_flag"] for s in sigs if s["validator_address"].upper() == address), None) for sigs in commits
    ]
    assert flags.count(BLOCK_ID_FLAG_COMMIT) >= 3, flags
