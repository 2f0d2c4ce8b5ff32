"""A real double-sign: node3's consensus key runs in a second node too, and CometBFT commits the evidence."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as slashing_query
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as slashing_tx

from gonkad import localnet
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.tx import TxFailed, TxOptions, deliver
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32
from x.bank import keys as bank_keys

EVIDENCE_TIMEOUT_S = 90.0


SETTINGS = localnet.load_settings(validators=4, chain_id="gonka-test")


@pytest.fixture(scope="module")
def double_signing_net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """4 validators plus a twin of node3 signing with node3's key; everything stopped at the end."""
    root = tmp_path_factory.mktemp("double-sign")
    try:
        localnet.build(root, settings=SETTINGS)
        twin = localnet.add_twin(root, "node3", settings=SETTINGS)
        localnet.start(root)
        localnet.start_node(twin)
        localnet.wait_for_height(root, 1, timeout_s=60)  # the network itself runs (the twin is not waited for)
        yield root
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)


def validator_address(home: Path) -> str:
    return json.loads((home / "config" / "priv_validator_key.json").read_text())["address"].upper()


def find_duplicate_vote(rpc: CometRPC, address: str, timeout_s: float) -> tuple[int, dict]:
    """The first committed block holding DuplicateVoteEvidence against ``address``: (its height, the evidence)."""
    deadline = time.monotonic() + timeout_s
    next_height = 1
    while time.monotonic() < deadline:
        try:
            latest = rpc.height()
            while next_height <= latest:
                for evidence in rpc.block(next_height)["block"]["evidence"]["evidence"] or []:
                    if (
                        evidence["type"] == "tendermint/DuplicateVoteEvidence"
                        and evidence["value"]["vote_a"]["validator_address"].upper() == address
                    ):
                        return next_height, evidence["value"]
                next_height += 1
        except RPCError:
            pass  # not up yet
        time.sleep(0.5)
    raise AssertionError(f"no DuplicateVoteEvidence for {address} in blocks 1..{next_height - 1} within {timeout_s}s")


@pytest.fixture(scope="module")
def evidence_block(double_signing_net: Path) -> tuple[int, dict, str]:
    """The first block holding node3's double sign: (its height H, the evidence, node3's address in hex)."""
    spec = localnet.load(double_signing_net)
    node3 = next(n for n in spec.nodes if n.name == "node3")
    address = validator_address(Path(node3.home))
    assert validator_address(Path(spec.twins[0].home)) == address
    height, evidence = find_duplicate_vote(CometRPC(spec.nodes[0].rpc), address, EVIDENCE_TIMEOUT_S)
    return height, evidence, address


def wait_all_past(rpcs: list[CometRPC], height: int, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while min(rpc.height() for rpc in rpcs) < height:
        assert time.monotonic() < deadline, f"{what}: not every node reached height {height} in {timeout_s}s"
        time.sleep(0.3)


def validator_set(rpc: CometRPC, height: int) -> dict[str, int]:
    """CometBFT's validator set at ``height``: address (hex) -> voting power."""
    reply = rpc.call("validators", height=str(height), per_page="100")
    return {v["address"].upper(): int(v["voting_power"]) for v in reply["validators"]}


def stored(rpc: CometRPC, key: bytes, height: int) -> int:
    """A bank amount (supply or balance, ngonka) as committed at ``height`` (a historic store read)."""
    reply = rpc.abci_query("/store/key", bank_keys.STORE_PREFIX + key, height=height)
    assert reply.get("code", 0) == 0, reply
    return int(reply["value"] or b"0")


SUPPLY = bank_keys.supply_key("ngonka")
POOL = bank_keys.balance_key(module_address("pool"), "ngonka")


SLASHED = SETTINGS.validator_stake_ngonka * 5 // 100
"""Double sign: slash_fraction_double_sign 0.05 of the genesis collateral, rounded down."""


def test_double_sign_evidence_is_committed(double_signing_net: Path, evidence_block: tuple[int, dict, str]) -> None:
    spec = localnet.load(double_signing_net)
    block_height, evidence, address = evidence_block

    vote_a, vote_b = evidence["vote_a"], evidence["vote_b"]
    assert vote_a["validator_address"].upper() == vote_b["validator_address"].upper() == address
    assert (vote_a["type"], vote_a["height"], vote_a["round"]) == (vote_b["type"], vote_b["height"], vote_b["round"])
    assert vote_a["block_id"] != vote_b["block_id"]
    assert int(vote_a["height"]) < block_height

    # The chain goes on: the honest nodes commit blocks past the one holding the evidence.
    honest = [CometRPC(n.rpc) for n in spec.nodes if n.name != "node3"]
    wait_all_past(honest, block_height + 3, 60, "the chain stopped after the evidence block")


def test_double_signer_is_slashed_jailed_and_tombstoned(
    double_signing_net: Path, evidence_block: tuple[int, dict, str]
) -> None:
    spec = localnet.load(double_signing_net)
    height, _, address = evidence_block
    rpc = CometRPC(spec.nodes[0].rpc)
    wait_all_past([rpc], height + 1, 30, "after the evidence block")
    querier = Querier(spec.nodes[0].rpc)
    operator = address_of(localnet.load_key(double_signing_net, "val3"))

    # 5% of the genesis collateral is gone, at block H and not before.
    collateral = querier.query(
        "/gonka.stake.v1.Query/Collateral",
        stake_query.QueryCollateralRequest(operator=operator),
        stake_query.QueryCollateralResponse,
    )
    assert (collateral.bonded, collateral.unbonding, collateral.denom) == (
        str(SETTINGS.validator_stake_ngonka - SLASHED),
        "0",
        "ngonka",
    )
    assert SLASHED == 5_000_000_000_000  # the settings' 100,000 GNK: exactly 5,000 GNK

    host = querier.query(
        "/gonka.stake.v1.Query/Host", stake_query.QueryHostRequest(operator=operator), stake_query.QueryHostResponse
    ).host
    assert host.jailed, f"{operator} is not jailed after its double sign at height {height}"
    assert host.collateral == str(SETTINGS.validator_stake_ngonka - SLASHED)

    cons_address = bech32.encode(bytes.fromhex(address), bech32.VALCONS_PREFIX)
    info = querier.query(
        "/cosmos.slashing.v1beta1.Query/SigningInfo",
        slashing_query.QuerySigningInfoRequest(cons_address=cons_address),
        slashing_query.QuerySigningInfoResponse,
    ).val_signing_info
    assert info.address == cons_address
    assert info.tombstoned, f"{cons_address} is not tombstoned"
    assert info.jailed_until.ToJsonString() == "9999-12-31T23:59:59Z"

    # The slashed coins went to the community pool (no beneficiaries), in block H; the supply is unchanged
    # (epoch 0 mints nothing).
    assert stored(rpc, SUPPLY, height - 1) == stored(rpc, SUPPLY, height) == SETTINGS.total_supply_ngonka
    assert (stored(rpc, POOL, height - 1), stored(rpc, POOL, height)) == (0, SLASHED)

    # Block H says so in its events: one slash of the host, all of it to the pool.
    events = rpc.call("block_results", height=str(height))["finalize_block_events"] or []
    slashes = [{a["key"]: a["value"] for a in e["attributes"]} for e in events if e["type"] == "slash"]
    assert len(slashes) == 1, slashes
    assert slashes[0]["operator"] == operator
    assert slashes[0]["amount"] == slashes[0]["pool"] == f"{SLASHED}ngonka"
    assert slashes[0]["reason"] == "double_sign:duplicate_vote"


def test_double_signer_leaves_the_validator_set_two_heights_later(
    double_signing_net: Path, evidence_block: tuple[int, dict, str]
) -> None:
    spec = localnet.load(double_signing_net)
    height, _, address = evidence_block
    honest = [CometRPC(n.rpc) for n in spec.nodes if n.name != "node3"]
    others = {validator_address(Path(n.home)) for n in spec.nodes if n.name != "node3"}
    wait_all_past(honest, height + 6, 60, "the three other validators stopped making blocks")
    rpc = honest[0]
    power = SETTINGS.validator_stake_ngonka // 10**9
    # The jailing's update is returned at H; CometBFT runs with it from H + 2.
    for h in range(max(1, height - 2), height + 2):
        assert validator_set(rpc, h) == {**{a: power for a in others}, address: power}, f"height {h}"
    for h in range(height + 2, rpc.height() + 1):
        assert validator_set(rpc, h) == {a: power for a in others}, f"height {h}: {address} still a validator"
    # The three go on alone: every commit from H + 2 on is theirs, node3's key (on either node) in none.
    top = rpc.height()
    for h in range(height + 3, top + 1):
        signers = {
            s["validator_address"].upper()
            for s in rpc.block(h)["block"]["last_commit"]["signatures"]
            if s["block_id_flag"] == 2
        }
        # three equal powers: more than 2/3 of them is all three
        assert signers == others, f"block {h}'s last commit is signed by {signers}, not by {others}"


def test_tombstoned_validator_cannot_unjail(double_signing_net: Path, evidence_block: tuple[int, dict, str]) -> None:
    spec = localnet.load(double_signing_net)
    key = localnet.load_key(double_signing_net, "val3")
    valoper = bech32.encode(bech32.decode(address_of(key)), bech32.VALOPER_PREFIX)
    querier = Querier(spec.nodes[0].rpc)
    with pytest.raises(TxFailed) as refused:
        deliver(querier, key, [slashing_tx.MsgUnjail(validator_addr=valoper)], spec.chain_id, TxOptions())
    assert (refused.value.codespace, refused.value.code) == ("slashing", 4), refused.value
    assert "tombstoned" in refused.value.log
    host = querier.query(
        "/gonka.stake.v1.Query/Host",
        stake_query.QueryHostRequest(operator=address_of(key)),
        stake_query.QueryHostResponse,
    ).host
    assert host.jailed
