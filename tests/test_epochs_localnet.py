"""Epochs, the validator set and downtime on a real 4-validator network with short epochs and a short window.

One network for the module, its tests in order: (a) the epoch and its stages move with the blocks; (b) a
deposit mid-epoch changes CometBFT's validator set only from the next set-validators height + 2; (c) a
validator stopped for real is jailed for downtime, slashed 1%, is refused an unjail before its jail time is
over, unjails after it and is back from the following set-validators height + 2; (d) at every height
CometBFT runs the power table of two heights before.

Epochs of 20 blocks from height 1: epoch n ≥ 1 starts at 1 + 20n, its race at offset 0, race validation at
4, set validators at 8 (one block), inference from 9; all of epoch 0 (heights 1–20) is inference.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as slashing_query
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as slashing_tx
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from nodes import kill_node, running_localnet

from gonkad import genesis, localnet
from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from protogen.gonka.stake.v1 import stake_pb2
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.tx import TxFailed, TxOptions, deliver
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32
from x.epochs import keys as epochs_keys
from x.pool import keys as pool_keys
from x.stake import keys as stake_keys

EPOCH_LENGTH, RACE_VALIDATION, SET_VALIDATORS, INFERENCE = 20, 4, 8, 9
JAIL_SECONDS = 20
"""Long enough that the early unjail in (c) is always tried well inside the jail time: the reads between the jail
and that unjail take 1-3 s, so ``EARLY_UNJAIL_MARGIN_S`` is left with room; any longer only waits."""
EARLY_UNJAIL_MARGIN_S = 10
"""The jail time that must be left when the early unjail is sent (it takes a block or two to commit)."""
OVERRIDES = {
    "epochs": {
        "params": {
            "epoch_length": str(EPOCH_LENGTH),
            "race_validation_offset": str(RACE_VALIDATION),
            "set_validators_offset": str(SET_VALIDATORS),
            "inference_offset": str(INFERENCE),
        }
    },
    "slashing": {
        "params": {
            "signed_blocks_window": "10",
            "min_signed_per_window": "0.5",
            "downtime_jail_seconds": str(JAIL_SECONDS),
        }
    },
}
_base = localnet.load_settings(validators=4, chain_id="gonka-epochs")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})

POWER_REDUCTION = 10**9
"""x/stake's default: one unit of weight (and power) per 10^9 ngonka of collateral."""
GENESIS_POWER = SETTINGS.validator_stake_ngonka // POWER_REDUCTION  # 100,000
DEPOSIT = 30_000 * POWER_REDUCTION
"""val1's deposit: 130,000 of 430,000 stays under the cap, a third of the total with four hosts (x/stake/power.py)."""
DOWNTIME_SLASH = SETTINGS.validator_stake_ngonka // 100  # 1%, rounded down
PARAMS = epochs_pb2.Params(
    epoch_length=EPOCH_LENGTH,
    race_validation_offset=RACE_VALIDATION,
    set_validators_offset=SET_VALIDATORS,
    inference_offset=INFERENCE,
)
S = epochs_pb2


# --- the schedule, written out ---------------------------------------------------------------------------


def expected_epoch(height: int) -> epochs_query.QueryCurrentEpochResponse:
    """What CurrentEpoch must answer once block ``height`` is committed."""
    if height <= EPOCH_LENGTH:  # epoch 0: heights 1..20, all inference, no stage until epoch 1's race
        epoch = epochs_pb2.Epoch(number=0, start_height=1, params=PARAMS)
        return epochs_query.QueryCurrentEpochResponse(
            height=height,
            epoch=epoch,
            stage=S.STAGE_INFERENCE,
            next_stage=S.STAGE_RACE,
            next_stage_height=EPOCH_LENGTH + 1,
            next_epoch_height=EPOCH_LENGTH + 1,
        )
    number = (height - 1) // EPOCH_LENGTH
    start = 1 + number * EPOCH_LENGTH
    offset = height - start
    stages = [
        (0, S.STAGE_RACE),
        (RACE_VALIDATION, S.STAGE_RACE_VALIDATION),
        (SET_VALIDATORS, S.STAGE_SET_VALIDATORS),
        (INFERENCE, S.STAGE_INFERENCE),
    ]
    stage = [s for o, s in stages if o <= offset][-1]
    later = [(o, s) for o, s in stages if o > offset]
    next_offset, next_stage = later[0] if later else (EPOCH_LENGTH, S.STAGE_RACE)
    return epochs_query.QueryCurrentEpochResponse(
        height=height,
        epoch=epochs_pb2.Epoch(number=number, start_height=start, params=PARAMS),
        stage=stage,
        next_stage=next_stage,
        next_stage_height=start + next_offset,
        next_epoch_height=start + EPOCH_LENGTH,
    )


def next_set_validators_height(after: int) -> int:
    """The first set-validators block strictly after ``after`` (epoch n's is 1 + 20n + 8, n ≥ 1): a message
    in that very block runs after its begin block has set the validators, so it waits for the next one."""
    n = 1
    while 1 + n * EPOCH_LENGTH + SET_VALIDATORS <= after:
        n += 1
    return 1 + n * EPOCH_LENGTH + SET_VALIDATORS


# --- the network and what it says -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from running_localnet(tmp_path_factory.mktemp("epochs"), SETTINGS)


def rpc0(root: Path) -> CometRPC:
    """node0, which these tests never stop."""
    return CometRPC(localnet.load(root).nodes[0].rpc)


def operators(root: Path) -> list[str]:
    return [address_of(localnet.load_key(root, f"val{i}")) for i in range(4)]


def cons_address(root: Path, operator: str) -> str:
    """The host's CometBFT address (hex), from its consensus key as the chain holds it."""
    host = Querier(localnet.load(root).nodes[0].rpc).query(
        "/gonka.stake.v1.Query/Host", stake_query.QueryHostRequest(operator=operator), stake_query.QueryHostResponse
    )
    return hashlib.sha256(host.host.consensus_pubkey).digest()[:20].hex().upper()


def host(root: Path, operator: str) -> stake_pb2.Host:
    return (
        Querier(localnet.load(root).nodes[0].rpc)
        .query(
            "/gonka.stake.v1.Query/Host", stake_query.QueryHostRequest(operator=operator), stake_query.QueryHostResponse
        )
        .host
    )


def validator_powers(root: Path) -> dict[str, int]:
    reply = Querier(localnet.load(root).nodes[0].rpc).query(
        "/gonka.stake.v1.Query/ValidatorPowers",
        stake_query.QueryValidatorPowersRequest(),
        stake_query.QueryValidatorPowersResponse,
    )
    powers = {p.operator: p.weight for p in reply.powers}
    assert reply.total == sum(powers.values())
    return powers


def cometbft_set(rpc: CometRPC, height: int) -> dict[str, int]:
    """CometBFT's validator set at ``height``: address (hex) -> voting power."""
    reply = rpc.call("validators", height=str(height), per_page="100")
    return {v["address"].upper(): int(v["voting_power"]) for v in reply["validators"]}


def store_get(rpc: CometRPC, key: bytes, height: int) -> bytes:
    """A key as committed at ``height`` (a historic store read; module queries answer the latest only)."""
    reply = rpc.abci_query("/store/key", key, height=height)
    assert reply.get("code", 0) == 0, reply
    return reply["value"]


def block_time_ns(rpc: CometRPC, height: int) -> int:
    stamp = Timestamp()
    stamp.FromJsonString(rpc.block(height)["block"]["header"]["time"])
    return stamp.ToNanoseconds()


def block_events(rpc: CometRPC, height: int, event_type: str) -> list[dict[str, str]]:
    events = rpc.call("block_results", height=str(height))["finalize_block_events"] or []
    return [{a["key"]: a["value"] for a in e["attributes"]} for e in events if e["type"] == event_type]


def wait_height(rpc: CometRPC, height: int, timeout_s: float, what: str) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            current = rpc.height()
        except RPCError:
            current = 0
        if current >= height:
            return current
        assert time.monotonic() < deadline, f"{what}: height {height} not reached in {timeout_s}s (at {current})"
        time.sleep(0.2)


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


# --- (a) epochs ---------------------------------------------------------------------------------------------


def test_epoch_and_stage_move_with_the_blocks(net: Path) -> None:
    rpc = rpc0(net)
    node = localnet.load(net).nodes[0].rpc
    seen: dict[int, epochs_query.QueryCurrentEpochResponse] = {}
    # Through epoch 0, into epoch 1 and past its set-validators block, to its inference stage.
    end = 1 + EPOCH_LENGTH + INFERENCE + 1
    deadline = time.monotonic() + 90
    while not seen or max(seen) < end:
        assert time.monotonic() < deadline, f"the chain did not reach height {end} in 90s (seen {sorted(seen)})"
        reply = rpc.abci_query(
            "/gonka.epochs.v1.Query/CurrentEpoch", epochs_query.QueryCurrentEpochRequest().SerializeToString()
        )
        assert reply.get("code", 0) == 0, reply
        answer = epochs_query.QueryCurrentEpochResponse.FromString(reply["value"])
        assert answer.height == int(reply["height"]), "the answer is not for the height the query ran at"
        assert answer == expected_epoch(answer.height), f"height {answer.height}: {answer}"
        seen[answer.height] = answer
        time.sleep(0.1)
    stages = {(a.epoch.number, a.stage) for a in seen.values()}
    assert {
        (0, S.STAGE_INFERENCE),
        (1, S.STAGE_RACE),
        (1, S.STAGE_RACE_VALIDATION),
        (1, S.STAGE_INFERENCE),
    } <= stages, f"polling missed whole stages: heights {sorted(seen)}"

    # The epoch record as committed at every height so far: the new epoch begins at its first block.
    top = rpc.height()
    for height in range(1, top + 1):
        record = epochs_pb2.Epoch.FromString(
            store_get(rpc, epochs_keys.STORE_PREFIX + epochs_keys.CURRENT_EPOCH_KEY, height)
        )
        assert record == expected_epoch(height).epoch, f"height {height}: {record}"

    # The stages announced themselves in the blocks where they begin, and only there.
    for height in range(1, top + 1):
        starts = block_events(rpc, height, "epoch_start")
        stage_events = block_events(rpc, height, "epoch_stage")
        expected = expected_epoch(height)
        first = expected.epoch.number > 0 and height == expected.epoch.start_height
        assert starts == ([{"epoch": str(expected.epoch.number), "height": str(height)}] if first else []), height
        begins = expected.epoch.number > 0 and (height - expected.epoch.start_height) in (
            0,
            RACE_VALIDATION,
            SET_VALIDATORS,
            INFERENCE,
        )
        assert stage_events == (
            [{"epoch": str(expected.epoch.number), "stage": S.Stage.Name(expected.stage)}] if begins else []
        ), f"height {height}: {stage_events}"

    # The CLI prints the same.
    shown = gonkad("query", "epochs", "current", "--node", node, "--output", "json")
    assert shown.returncode == 0, shown.stderr
    printed = json_format.ParseDict(json.loads(shown.stdout), epochs_query.QueryCurrentEpochResponse())
    assert printed.height >= top
    assert printed == expected_epoch(printed.height), shown.stdout


# --- (b) the validator set changes only at set validators ----------------------------------------------------


def test_deposit_changes_the_validator_set_only_at_set_validators(net: Path) -> None:
    rpc = rpc0(net)
    spec = localnet.load(net)
    querier = Querier(spec.nodes[0].rpc)
    ops = operators(net)
    addresses = {op: cons_address(net, op) for op in ops}
    old = {addresses[op]: GENESIS_POWER for op in ops}
    assert validator_powers(net) == {op: GENESIS_POWER for op in ops}

    # Wait for an inference stage of an epoch ≥ 1 with room left before the next epoch.
    deadline = time.monotonic() + 90
    while True:
        current = expected_epoch(rpc.height())
        offset = current.height - current.epoch.start_height
        if current.epoch.number >= 1 and current.stage == S.STAGE_INFERENCE and offset <= INFERENCE + 3:
            break
        assert time.monotonic() < deadline, f"no inference stage with room left in 90s (at {current.height})"
        time.sleep(0.2)

    key = localnet.load_key(net, "val1")
    operator = address_of(key)
    deposit = stake_tx.MsgDepositCollateral(
        operator=operator, amount=coin_pb2.Coin(denom="ngonka", amount=str(DEPOSIT))
    )
    delivered = deliver(querier, key, [deposit], spec.chain_id, TxOptions())
    at = delivered.height
    assert expected_epoch(at).stage == S.STAGE_INFERENCE, f"the deposit landed at {at}, not in an inference stage"
    collateral = querier.query(
        "/gonka.stake.v1.Query/Collateral",
        stake_query.QueryCollateralRequest(operator=operator),
        stake_query.QueryCollateralResponse,
    )
    assert collateral.bonded == str(SETTINGS.validator_stake_ngonka + DEPOSIT)
    new_power = (SETTINGS.validator_stake_ngonka + DEPOSIT) // POWER_REDUCTION
    assert new_power == 130_000 and 3 * new_power <= 3 * GENESIS_POWER + new_power  # under the 1/3 cap
    set_validators = next_set_validators_height(at)
    assert set_validators == expected_epoch(at).next_epoch_height + SET_VALIDATORS
    if rpc.height() < set_validators:  # the power table in force still has the old power
        assert validator_powers(net) == {op: GENESIS_POWER for op in ops}

    wait_height(rpc, set_validators + 3, 60, "after the set-validators block")
    new = {**old, addresses[operator]: new_power}
    for height in range(at, set_validators + 4):
        assert cometbft_set(rpc, height) == (old if height < set_validators + 2 else new), f"height {height}"
    assert validator_powers(net) == {op: new_power if op == operator else GENESIS_POWER for op in ops}
    events = block_events(rpc, set_validators, "set_validators")
    assert events == [
        {
            "epoch": str(expected_epoch(set_validators).epoch.number),
            "validators": "4",
            "total_power": str(3 * GENESIS_POWER + new_power),
        }
    ]


# --- (c) downtime, for real --------------------------------------------------------------------------------


def test_stopped_validator_is_jailed_slashed_and_comes_back_after_unjail(net: Path) -> None:
    rpc = rpc0(net)
    spec = localnet.load(net)
    node = spec.nodes[0].rpc
    querier = Querier(node)
    ops = operators(net)
    val2 = ops[2]
    address2 = cons_address(net, val2)
    valcons2 = bech32.encode(bytes.fromhex(address2), bech32.VALCONS_PREFIX)
    baseline = validator_powers(net)  # val1 may hold more since (b)
    assert baseline[val2] == GENESIS_POWER
    by_address = {cons_address(net, op): p for op, p in baseline.items()}
    without = {a: p for a, p in by_address.items() if a != address2}

    stopped_at = rpc.height()
    kill_node(net, "node2")

    # Jailed once it missed more than half of a 10-block window.
    deadline = time.monotonic() + 120
    while not host(net, val2).jailed:
        assert time.monotonic() < deadline, f"{val2} was not jailed within 120s of stopping node2"
        time.sleep(0.3)
    detected = rpc.height()
    jailed = [
        h for h in range(stopped_at, detected + 1) if any(e["operator"] == val2 for e in block_events(rpc, h, "jail"))
    ]
    assert len(jailed) == 1, f"jail events for {val2} at heights {jailed}"
    jail_height = jailed[0]
    liveness = block_events(rpc, jail_height, "liveness")
    assert liveness == [{"address": valcons2, "missed_blocks": "6", "height": str(jail_height)}]
    slashes = block_events(rpc, jail_height, "slash")
    assert slashes == [
        {
            "operator": val2,
            "amount": f"{DOWNTIME_SLASH}ngonka",
            "reason": "missing_signature",
            "pool": f"{DOWNTIME_SLASH}ngonka",
        }
    ]

    # Slashed exactly 1% (to the community pool), out of the power table at once, out of CometBFT's set two
    # heights later.
    assert host(net, val2).collateral == str(SETTINGS.validator_stake_ngonka - DOWNTIME_SLASH)
    slashed_in = pool_keys.STORE_PREFIX + pool_keys.inflow_key(pool_keys.SOURCE_SLASH, "ngonka")
    assert (
        int(store_get(rpc, slashed_in, jail_height) or b"0") - int(store_get(rpc, slashed_in, jail_height - 1) or b"0")
        == DOWNTIME_SLASH
    )
    assert val2 not in validator_powers(net)
    info = querier.query(
        "/cosmos.slashing.v1beta1.Query/SigningInfo",
        slashing_query.QuerySigningInfoRequest(cons_address=valcons2),
        slashing_query.QuerySigningInfoResponse,
    ).val_signing_info
    jailed_until = info.jailed_until.ToNanoseconds()
    assert jailed_until == block_time_ns(rpc, jail_height) + JAIL_SECONDS * 10**9
    assert not info.tombstoned

    # An unjail before the jail time is over is refused (slashing/4).
    key = localnet.load_key(net, "val2")
    unjail = slashing_tx.MsgUnjail(validator_addr=bech32.encode(bech32.decode(val2), bech32.VALOPER_PREFIX))
    left_s = (jailed_until - block_time_ns(rpc, rpc.height())) / 10**9
    assert left_s >= EARLY_UNJAIL_MARGIN_S, (
        f"only {left_s:.1f}s of the {JAIL_SECONDS}s jail left at height {rpc.height()} (jailed at {jail_height}, "
        f"seen at {detected}): too little to send an unjail that must land inside it"
    )
    with pytest.raises(TxFailed) as refused:
        deliver(querier, key, [unjail], spec.chain_id, TxOptions())
    assert (refused.value.codespace, refused.value.code) == ("slashing", 4), refused.value
    refused_at = int(rpc.tx(bytes.fromhex(refused.value.txhash))["height"])
    assert block_time_ns(rpc, refused_at) < jailed_until
    assert host(net, val2).jailed

    # Back up: node2 restarts and catches up; after the jail time (block time) the CLI unjails it.
    assert localnet.start(net) == ["node2"]
    wait_height(CometRPC(spec.nodes[2].rpc), rpc.height(), 120, "node2 catching up")
    deadline = time.monotonic() + JAIL_SECONDS + 60
    while block_time_ns(rpc, rpc.height()) < jailed_until:
        assert time.monotonic() < deadline, "block time did not pass the jail time"
        time.sleep(0.2)
    shown = gonkad("query", "slashing", "signing-info", valcons2, "--node", node, "--output", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["val_signing_info"]["jailed_until"] == info.jailed_until.ToJsonString()
    sent = gonkad(
        "tx",
        "slashing",
        "unjail",
        "--from",
        "val2",
        "--home",
        str(net),
        "--keyring-backend",
        "test",
        "--node",
        node,
        "-y",
        "--output",
        "json",
    )
    assert sent.returncode == 0, sent.stdout + sent.stderr
    txhash = json.loads(sent.stdout)["txhash"]
    deadline = time.monotonic() + 30
    while True:
        try:
            committed = rpc.tx(bytes.fromhex(txhash))
            break
        except RPCError:
            assert time.monotonic() < deadline, f"unjail {txhash} not committed in 30s"
            time.sleep(0.2)
    assert int(committed["tx_result"].get("code", 0)) == 0, committed["tx_result"]
    unjailed_at = int(committed["height"])
    assert not host(net, val2).jailed

    # Back in the set only from the next set-validators height + 2, with its slashed collateral's power.
    back = next_set_validators_height(unjailed_at)
    wait_height(rpc, back + 3, 90, "after the set-validators block that follows the unjail")
    slashed_power = (SETTINGS.validator_stake_ngonka - DOWNTIME_SLASH) // POWER_REDUCTION
    assert slashed_power == 99_000
    for height in range(stopped_at, back + 4):
        if height < jail_height + 2:
            expected = by_address
        elif height < back + 2:
            expected = without
        else:
            expected = {**without, address2: slashed_power}
        assert cometbft_set(rpc, height) == expected, f"height {height}"
    assert validator_powers(net) == {**baseline, val2: slashed_power}


# --- (d) CometBFT follows the power table ------------------------------------------------------------------


def test_cometbft_runs_the_power_table_of_two_heights_before(net: Path) -> None:
    rpc = rpc0(net)
    ops = operators(net)
    addresses = {op: cons_address(net, op) for op in ops}
    genesis_set = {a: GENESIS_POWER for a in addresses.values()}
    assert cometbft_set(rpc, 1) == cometbft_set(rpc, 2) == genesis_set
    top = rpc.height()
    for height in range(1, top - 1):
        table = {}
        for op in ops:
            raw = store_get(rpc, stake_keys.STORE_PREFIX + stake_keys.power_key(bech32.decode(op)), height)
            if raw:
                table[addresses[op]] = int.from_bytes(raw, "big")
        assert cometbft_set(rpc, height + 2) == table, f"CometBFT at {height + 2} against the table at {height}"
