"""The Sprint race on a live 4-validator localnet, every validator a host with its own ML node (the tiny race)
behind its host's program, which races, commits, serves its openings and validates the others by itself:

(a) two consecutive epochs: every host commits, every other host validates it, each weight is its confirmed count
    × scale, x/stake's weights are x/sprint's, and CometBFT runs the resulting power table from set validators + 2;
(b) a host whose ML node is down for a race has no weight that epoch and leaves CometBFT's set; back the next;
(c) test-only faults: an ``inflate`` host and a ``borrow`` host are found, slashed exactly the fraud fraction
    (paid to the finders pro rata, the rest to the community pool) and jailed; a ``lazy-validator`` shows itself
    only by its verdicts, which the test compares with the others'; no honest host is ever flagged; the chain
    goes on;
(d) a light client from the genesis set verifies every ended epoch's summary through the sets the race made and an
    inference the network served (``gonkad verify-work`` too), and refuses a tampered summary, the inference in
    another host's work root, a forged certificate and a handoff the outgoing set did not sign.

Epochs of 32 blocks: race at offsets 0–9, race validation 10–19, set validators 20, inference 21–31 (where the
faults test restarts executors); epoch 0 (heights 1–32) has no race. Every host races one chunk of nonces per
epoch, which it finishes early in the stage however the cores are shared, so the hosts weigh about the same and
no one of them holds a third of the power. The tests share one network and run in order, one epoch or two each,
each from the first race that starts after it has set the network up (the ML nodes may come up after epoch 1's
race began). Who could validate in an epoch is read from the chain (the power table at its validation stage).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from chain_reads import block_events, collateral_at, finished, wait_height
from google.protobuf import json_format
from nodes import restart_executors, running_localnet, service

from gonka import Gonka
from gonkad import genesis, localnet, localnet_services
from protogen.gonka.bls.v1 import bls_pb2
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.sprint.v1 import sprint_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.address import module_address
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, bls
from sdk.dec import mul_floor
from sdk.keyring.keyring import Keyring
from x.bls.keyfile import load_secret
from x.slashing import keys as slashing_keys
from x.sprint.client.epochproof import (
    LightClient,
    ProofError,
    fetch_epoch_proof,
    fetch_genesis_set,
    fetch_work_proof,
    verify_work,
)
from x.sprint.client.queries import commitments, params, validations, weights

EPOCH_LENGTH, RACE_VALIDATION, SET_VALIDATORS, INFERENCE = 32, 10, 20, 21
OVERRIDES = {
    "epochs": {
        "params": {
            "epoch_length": str(EPOCH_LENGTH),
            "race_validation_offset": str(RACE_VALIDATION),
            "set_validators_offset": str(SET_VALIDATORS),
            "inference_offset": str(INFERENCE),
        }
    },
    "rewards": {"params": {"issuance_cap": "0"}},
}
_base = localnet.load_settings(validators=4, chain_id="gonka-sprint", with_services=True)
assert _base.services is not None and _base.services.race_preset == "tiny"
SETTINGS = _base.model_copy(
    update={
        "genesis": genesis.merge_overrides(_base.genesis, OVERRIDES),
        "services": _base.services.model_copy(update={"transfer_agents": 1, "race_nonces": 4096}),
    }
)
HOSTS = range(4)
SLASHED_POOL_ADDRESS = bech32.encode(module_address(slashing_keys.SLASHED_POOL))
"""Where a slash's coins go first, to be paid on to the finders and the community pool."""
FRAUD_SLASH = Fraction(1, 5)
"""x/sprint's default ``fraud_slash_fraction``."""


def start(epoch: int) -> int:
    return 1 + epoch * EPOCH_LENGTH


def set_validators(epoch: int) -> int:
    return start(epoch) + SET_VALIDATORS


def race_validation(epoch: int) -> int:
    return start(epoch) + RACE_VALIDATION


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from running_localnet(tmp_path_factory.mktemp("sprint"), SETTINGS)


def rpc0(root: Path) -> CometRPC:
    return CometRPC(localnet.load(root).nodes[0].rpc)


def querier(root: Path) -> Querier:
    return Querier(localnet.load(root).nodes[0].rpc)


def operators(root: Path) -> list[str]:
    return [address_of(localnet.load_key(root, f"val{i}")) for i in HOSTS]


def cometbft_set(rpc: CometRPC, height: int) -> dict[str, int]:
    reply = rpc.call("validators", height=str(height), per_page="100")
    return {v["address"].upper(): int(v["voting_power"]) for v in reply["validators"]}


def cons_address(q: Querier, operator: str) -> str:
    host = q.query(
        "/gonka.stake.v1.Query/Host", stake_query.QueryHostRequest(operator=operator), stake_query.QueryHostResponse
    ).host
    return hashlib.sha256(host.consensus_pubkey).digest()[:20].hex().upper()


def power_table(q: Querier, height: int = 0) -> dict[str, int]:
    """x/stake's power table at ``height`` (0: now); it changes only in set-validators blocks."""
    reply = q.query(
        "/gonka.stake.v1.Query/ValidatorPowers",
        stake_query.QueryValidatorPowersRequest(),
        stake_query.QueryValidatorPowersResponse,
        height,
    )
    return {p.operator: p.weight for p in reply.powers}


def with_power(root: Path, epoch: int) -> list[int]:
    """The hosts that held power during ``epoch``'s race validation, so had to validate the others."""
    table = power_table(querier(root), race_validation(epoch))
    return [i for i, op in enumerate(operators(root)) if op in table]


def gonkad_json(*args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stake_host(rpc: CometRPC, operator: str) -> dict[str, Any]:
    """The host's record by ``gonkad query stake host`` (JSON: collateral as a string, ``jailed`` when true)."""
    return gonkad_json("query", "stake", "host", operator, "--node", rpc.url, "--output", "json")["host"]


def results(q: Querier, epoch: int) -> dict[str, sprint_pb2.HostResult]:
    return {h.host: h for h in weights(q, epoch).hosts}


def check_confirmed_epoch(root: Path, epoch: int, racing: list[int], validating: list[int]) -> None:
    """Every host in ``racing`` committed, was validated by every other host in ``validating`` (once, valid), and
    weighs its count × scale; x/stake holds exactly those weights for ``epoch``; CometBFT runs the power table
    from set validators + 2 (the set before until then)."""
    q, rpc, ops = querier(root), rpc0(root), operators(root)
    scale = params(q).weight_scale
    committed = {c.host: c for c in commitments(q, epoch)}
    assert sorted(committed) == sorted(ops[i] for i in racing), epoch
    pairs = sorted((v.validator, v.host) for v in validations(q, epoch))
    assert pairs == sorted((ops[v], ops[h]) for h in racing for v in validating if v != h), epoch
    assert not any(v.fraud for v in validations(q, epoch)), epoch
    decided = results(q, epoch)
    for i in racing:
        result = decided[ops[i]]
        assert result.outcome == sprint_pb2.OUTCOME_CONFIRMED, (epoch, i, result)
        assert result.weight == committed[ops[i]].count * scale > 0, (epoch, i)
    expected = {ops[i]: decided[ops[i]].weight for i in racing}
    stake = gonkad_json("query", "stake", "weights", str(epoch), "--node", rpc.url, "--output", "json")
    assert {w["operator"]: int(w["weight"]) for w in stake["weights"]} == expected
    sprint = gonkad_json("query", "sprint", "weights", str(epoch), "--node", rpc.url, "--output", "json")
    assert {h["host"]: int(h["weight"]) for h in sprint["result"]["hosts"]} == expected
    table = power_table(q)
    assert sorted(table) == sorted(expected)
    sv = set_validators(epoch)
    wait_height(rpc, sv + 2, 60)
    in_force = {cons_address(q, op): power for op, power in table.items()}
    assert cometbft_set(rpc, sv + 2) == in_force, epoch
    assert cometbft_set(rpc, sv + 1) != in_force or cometbft_set(rpc, sv) == in_force


def next_race(rpc: CometRPC) -> int:
    """The first epoch whose race starts at least 2 blocks from now."""
    epoch = 1
    while start(epoch) < rpc.height() + 2:
        epoch += 1
    return epoch


SERVED: dict[str, str] = {}
"""The inference the first test has the network serve (``id``), which the light client later proves."""


def serve_one_inference(root: Path) -> str:
    """One paid chat request from the faucet's key through the TA; its inference id once the chain finished it."""
    spec = localnet.load(root)
    assert spec.services is not None
    client = Gonka(
        ta_urls=[ta.url for ta in spec.services.of("agent")], key=Keyring(root, "test").private_key("faucet")
    )
    client.chat.completions.create(
        model=spec.services.model, max_tokens=8, messages=[{"role": "user", "content": "race"}]
    )
    inference_id = client.last_inference_id
    assert inference_id
    assert finished(querier(root), inference_id, timeout_s=30).status == inference_pb2.STATUS_FINISHED
    return inference_id


def test_two_epochs_of_the_race_set_the_validator_set(net: Path) -> None:
    rpc = rpc0(net)
    SERVED["id"] = serve_one_inference(net)
    first = next_race(rpc)
    for epoch in (first, first + 1):
        wait_height(rpc, set_validators(epoch) + 1, 120)
        assert with_power(net, epoch) == list(HOSTS), epoch
        check_confirmed_epoch(net, epoch, racing=list(HOSTS), validating=list(HOSTS))
    status = gonkad_json("localnet", "status", "--home", str(net))
    assert status["race"]["epoch"] == first + 1
    shown = {h["host"]: h["weight"] for h in status["race"]["hosts"]}
    assert shown == {h.host: h.weight for h in weights(querier(net), first + 1).hosts}


def test_a_host_without_its_ml_node_loses_its_weight_and_regains_it(net: Path) -> None:
    rpc, q, ops = rpc0(net), querier(net), operators(net)
    localnet_services.stop_service(service(net, "mlnode3"))
    down = next_race(rpc)
    wait_height(rpc, set_validators(down) + 1, 120)
    assert with_power(net, down) == list(HOSTS), "host 3 held power while its node was down"
    check_confirmed_epoch(net, down, racing=[0, 1, 2], validating=[0, 1, 2])  # host 3 cannot check without its node
    assert ops[3] not in results(q, down)
    assert cons_address(q, ops[3]) not in cometbft_set(rpc, set_validators(down) + 2)
    assert cons_address(q, ops[3]) in cometbft_set(rpc, set_validators(down) + 1)
    localnet.start(net)  # the ML node comes back, serving before this returns
    back = next_race(rpc)
    wait_height(rpc, set_validators(back) + 1, 120)
    validating = with_power(net, back)  # host 3 too once it raced in an epoch before ``back`` (a slow restart)
    assert validating[:3] == [0, 1, 2], validating
    check_confirmed_epoch(net, back, racing=list(HOSTS), validating=validating)
    assert cons_address(q, ops[3]) in cometbft_set(rpc, set_validators(back) + 2)


def test_inflating_and_borrowing_hosts_are_slashed_and_a_lazy_validator_shows_itself(net: Path) -> None:
    rpc, q, ops = rpc0(net), querier(net), operators(net)
    faults = {1: "lazy-validator", 2: "borrow", 3: "inflate"}
    now = (rpc.height() - 1) // EPOCH_LENGTH
    if rpc.height() > start(now) + INFERENCE + 2:
        now += 1  # too late in this epoch's inference stage: the next one's
    wait_height(rpc, set_validators(now) + 1, 60)
    restart_executors(net, {i: ["--sprint-fault", fault] for i, fault in faults.items()})  # in the inference stage
    epoch = now + 1  # their first race: a new one, raced with the faults even by an executor up after it began
    sv = set_validators(epoch)
    wait_height(rpc, sv + 1, 120)
    assert with_power(net, epoch) == list(HOSTS), "every host held power to validate in the faults' epoch"
    collateral = {op: collateral_at(q, op, sv - 1) for op in ops}  # as the set-validators block found it
    decided = results(q, epoch)
    verdicts = {(v.validator, v.host): v for v in validations(q, epoch)}
    slashes = {e["operator"]: e for e in block_events(rpc, sv, "slash")}
    for cheat in (2, 3):
        result = decided[ops[cheat]]
        assert result.outcome == sprint_pb2.OUTCOME_FRAUD and result.weight == 0, (cheat, result)
        taken = mul_floor(collateral[ops[cheat]], FRAUD_SLASH)
        assert int(result.slashed) == taken and slashes[ops[cheat]]["reason"] == "sprint_fraud"
        host = stake_host(rpc, ops[cheat])
        assert host.get("jailed") is True and int(host["collateral"]) == collateral[ops[cheat]] - taken
        finders = [(v.validator, v.power) for (_, h), v in verdicts.items() if h == ops[cheat] and v.fraud]
        paid = {
            (e["recipient"], e["amount"])
            for e in block_events(rpc, sv, "transfer")
            if e.get("sender") == SLASHED_POOL_ADDRESS
        }
        total = sum(power for _, power in finders)
        for finder, power in finders:
            assert (finder, f"{taken * power // total}ngonka") in paid, (cheat, finder)
        rest = taken - sum(taken * power // total for _, power in finders)
        assert slashes[ops[cheat]]["pool"] == f"{rest}ngonka"
        # the lazy validator judged every cheat valid; every honest validator found it
        assert not verdicts[(ops[1], ops[cheat])].fraud
        assert all(verdicts[(ops[v], ops[cheat])].fraud for v in (0, 2, 3) if v != cheat)
    lazy = [
        v for v in HOSTS if any(not verdicts[(ops[v], ops[c])].fraud for c in (2, 3) if (ops[v], ops[c]) in verdicts)
    ]
    assert lazy == [1]
    for honest in (0, 1):
        assert decided[ops[honest]].outcome == sprint_pb2.OUTCOME_CONFIRMED
        for earlier in range(1, epoch + 1):  # every epoch's result is kept (its validations only two epochs)
            result = results(q, earlier).get(ops[honest])
            assert result is None or result.fraud_power == 0, (earlier, honest)
    wait_height(rpc, sv + 8, 60)  # the chain goes on with the two honest hosts
    assert set(cometbft_set(rpc, sv + 2)) == {cons_address(q, ops[i]) for i in (0, 1)}


def genesis_set(root: Path) -> bls_pb2.ValidatorSetHandoff:
    """The genesis validator set, as a light client should take it: the node's first handoff, checked against
    what this machine knows without the node: each validator's BLS key from its home's key file and its power
    in CometBFT's genesis set (height 1), by operator."""
    q, spec = querier(root), localnet.load(root)
    first = fetch_genesis_set(q)
    keys = {
        address_of(localnet.load_key(root, f"val{i}")): bls.public_key(load_secret(Path(node.home)))
        for i, node in enumerate(spec.nodes)
    }
    powers = cometbft_set(rpc0(root), 1)
    expected = sorted((op, keys[op], powers[cons_address(q, op)]) for op in keys)
    assert sorted((v.operator, v.public_key, v.power) for v in first.validators) == expected
    assert first.previous_hash == bytes(32)
    return first


def test_a_light_client_verifies_every_epoch_from_the_genesis_set(net: Path) -> None:
    """From the genesis set alone, the client walks every handoff (the sets the race made, one host out and back,
    the cheaters jailed) and checks each decided epoch's summary under its certificate; it refuses a tampered
    summary, a forged certificate and a handoff its outgoing set did not sign."""
    q, chain_id = querier(net), SETTINGS.chain_id
    client = LightClient(chain_id, genesis_set(net))
    summaries = []
    for epoch in range(1, 64):
        try:
            answer = fetch_epoch_proof(q, epoch)
        except RPCError as exc:
            assert "has not ended" in str(exc), exc
            break
        if not answer.certificate.signature:
            continue  # its certificate is not out yet (the epoch ended a block ago)
        summary = client.verify_summary(answer)
        summaries.append(summary)
        decided = {h.host: h.weight for h in weights(q, epoch).hosts if h.weight}
        if decided and not weights(q, epoch).carried_over:
            assert {h.host: h.weight for h in summary.hosts if h.weight} == decided, epoch
    assert len(summaries) >= 4 and client.trusted.effective_height > start(2), "the client walked the race's sets"
    last = fetch_epoch_proof(q, summaries[-1].epoch)
    tampered = type(last)()
    tampered.CopyFrom(last)
    tampered.summary.hosts[0].weight += 1
    with pytest.raises(ProofError, match="tampered"):
        LightClient(chain_id, genesis_set(net)).verify_summary(tampered)
    forged = type(last)()
    forged.CopyFrom(last)
    forged.certificate.signature = bls.sign(b"\x01" * 32, b"not the summary")
    with pytest.raises(ProofError):
        LightClient(chain_id, genesis_set(net)).verify_summary(forged)
    proven = bytes.fromhex(SERVED["id"])
    line, epoch, height = verify_work(q, proven, genesis_set(net), chain_id)  # the served inference, end to end
    record = finished(q, SERVED["id"])
    assert (line.host, epoch) == (record.executor, record.epoch) and line.inferences >= 1
    work = fetch_work_proof(q, proven)
    other = next(op for op in operators(net) if op != line.host)
    with pytest.raises(ProofError, match="no line|not in"):  # the inference in another host's work root
        LightClient(chain_id, genesis_set(net)).verify_work(proven, work, fetch_epoch_proof(q, epoch, other))
    genesis_file = net / "genesis-set.json"
    genesis_file.write_text(json.dumps(json_format.MessageToDict(genesis_set(net))))
    shown = subprocess.run(
        [sys.executable, "-m", "gonkad", "verify-work", SERVED["id"], "--node", rpc0(net).url]
        + ["--genesis-set", str(genesis_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0 and shown.stdout.startswith("valid") and shown.stdout.count("\n") == 1, shown
    unsigned = type(last)()
    unsigned.CopyFrom(last)
    assert unsigned.handoffs, "the last epoch's proof carries the handoffs since genesis"
    unsigned.handoffs[-1].handoff.validators[0].power += 1
    with pytest.raises(ProofError):
        LightClient(chain_id, genesis_set(net)).verify_summary(unsigned)
