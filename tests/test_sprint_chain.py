"""x/sprint on an in-process chain: the race's seed and sample randomness fixed at their stages, commitments and
validations accepted only in their stage and refused otherwise (each with its code, changing nothing), the
weights decided at set validators (confirmed, unconfirmed, fraud slashed and jailed, carried over), handed to
x/stake and sent to CometBFT as the validator set, and the module's genesis round trip.

Epochs of 8 blocks: epoch 0 is heights 1–8 (no race); epoch n ≥ 1 starts at 8n + 1: race at 8n + 1 and 8n + 2,
race validation at 8n + 3 and 8n + 4, set validators at 8n + 5, inference to 8n + 8. Four hosts of 100 GNK
(genesis weight 100 each); invariants are checked after every block.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from test_stake import (
    GNK,
    KEYS,
    blocks_to,
    collateral,
    consensus_key,
    deliver,
    deposit,
    events,
    host_chain,
    operator,
    signed,
    updates,
)

from mlnode.sprint.binomial import threshold
from mlnode.sprint.params import RACE_PRESETS, race_params_hash
from protogen.gonka.poc.v1 import poc_pb2
from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.address import module_address
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1
from sdk.services import gonka
from x.pool import keys as pool_keys
from x.sprint import genesis as sprint_genesis
from x.sprint.client.queries import commit_message, validation_message
from x.sprint.params import default_params
from x.sprint.verdict import fraud_threshold

EPOCHS = {"epoch_length": "8", "race_validation_offset": "2", "set_validators_offset": "4", "inference_offset": "5"}
HASH = default_params().race_params_hash
SAMPLES = default_params().samples
QUERY = gonka("sprint").query
HOSTS = KEYS[:4]
OUTSIDER = KEYS[5]
"""Funded, never a host."""


def race_start(epoch: int) -> int:
    return 8 * epoch + 1


def sprint_chain(path: Path, epochs: dict[str, str] = EPOCHS, **options: Any) -> InProcessChain:
    return host_chain(path, [100 * GNK] * 4, epochs=epochs, check_invariants=True, **options)


def root(i: int, epoch: int = 1) -> bytes:
    return hashlib.sha256(f"root {i} {epoch}".encode()).digest()


def commit(chain: InProcessChain, key: secp256k1.PrivateKey, count: int, epoch: int = 1, **fields: Any) -> Any:
    msg = commit_message(address_of(key), epoch, root(KEYS.index(key), epoch), count, HASH)
    for name, value in fields.items():
        setattr(msg, name, value)
    return deliver(chain, key, msg)[0]


def validate_all(
    chain: InProcessChain,
    epoch: int,
    failures: dict[tuple[int, int], int] | None = None,
    missing: Sequence[tuple[int, int]] = (),
) -> None:
    """Every host validates every other host in one tx of its own, all in one block; ``failures[(v, h)]``
    what validator v reports of host h (0 otherwise); no validation of the pairs (v, h) in ``missing``."""
    txs = []
    for v, key in enumerate(HOSTS):
        msgs = [
            validation_message(address_of(key), epoch, address_of(other), SAMPLES, (failures or {}).get((v, h), 0))
            for h, other in enumerate(HOSTS)
            if h != v and (v, h) not in missing
        ]
        if msgs:
            txs.append(signed(chain, key, *msgs))
    response = chain.block(txs)
    assert [r.code for r in response.tx_results] == [0] * len(txs), [r.log for r in response.tx_results]


def weights(chain: InProcessChain, epoch: int) -> sprint_pb2.EpochResult:
    return chain.query(
        QUERY + "Weights", query_pb2.QueryWeightsRequest(epoch=epoch), query_pb2.QueryWeightsResponse
    ).result


def race(chain: InProcessChain, epoch: int) -> sprint_pb2.Race:
    return chain.query(QUERY + "Race", query_pb2.QueryRaceRequest(epoch=epoch), query_pb2.QueryRaceResponse).race


def stake_weights(chain: InProcessChain, epoch: int) -> dict[str, int]:
    reply = chain.query(
        gonka("stake").query + "EpochWeights",
        stake_query.QueryEpochWeightsRequest(epoch=epoch),
        stake_query.QueryEpochWeightsResponse,
    )
    return {w.operator: w.weight for w in reply.weights}


def run_race(chain: InProcessChain, counts: Sequence[int], epoch: int = 1) -> None:
    """Blocks to ``epoch``'s race; each host commits its count (0: none)."""
    blocks_to(chain, race_start(epoch) - 1)
    txs = [
        signed(chain, key, commit_message(address_of(key), epoch, root(i, epoch), count, HASH))
        for i, (key, count) in enumerate(zip(HOSTS, counts))
        if count
    ]
    response = chain.block(txs)
    assert [r.code for r in response.tx_results] == [0] * len(txs), [r.log for r in response.tx_results]
    blocks_to(chain, race_start(epoch) + 1)


def test_an_epoch_of_the_race_sets_the_weights_and_the_validator_set(tmp_path: Path) -> None:
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        seed = race(chain, 1)
        assert (seed.epoch, seed.seed_height, len(seed.seed), seed.randomness) == (1, 9, 32, b"")
        commitments = chain.query(
            QUERY + "Commitments", query_pb2.QueryCommitmentsRequest(epoch=1), query_pb2.QueryCommitmentsResponse
        ).commitments
        by_host = {c.host: c for c in commitments}
        assert {h: (c.count, c.height) for h, c in by_host.items()} == {
            address_of(k): (50 + 10 * i, 9) for i, k in enumerate(HOSTS)
        }
        assert by_host[address_of(HOSTS[0])].pubkey == HOSTS[0].public_key
        response = chain.block()  # 11: the validation stage fixes the sample randomness
        randomness = race(chain, 1)
        assert randomness.randomness_height == 11 and len(randomness.randomness) == 32
        assert events(response, "sprint_randomness")[0]["randomness"] == randomness.randomness.hex()
        validate_all(chain, 1)  # 12
        blocks_to(chain, 12)
        response = chain.block()  # 13: set validators
        result = weights(chain, 1)
        assert (result.epoch, result.carried_over, result.total_weight, result.height) == (1, False, 260, 13)
        assert {h.host: (h.count, h.weight, h.outcome) for h in result.hosts} == {
            address_of(k): (50 + 10 * i, 50 + 10 * i, sprint_pb2.OUTCOME_CONFIRMED) for i, k in enumerate(HOSTS)
        }
        assert all((h.valid_power, h.fraud_power, h.others_power) == (300, 0, 300) for h in result.hosts)
        assert stake_weights(chain, 1) == {address_of(k): 50 + 10 * i for i, k in enumerate(HOSTS)}
        assert sorted(updates(response)) == sorted((consensus_key(i), 50 + 10 * i) for i in range(4))
        # The next epoch's race: a new seed, and its randomness once its validation stage begins.
        blocks_to(chain, race_start(2))
        assert race(chain, 2).seed not in (b"", seed.seed)


def test_a_host_invalid_at_inference_gets_no_weight_whatever_it_raced(tmp_path: Path) -> None:
    """x/poc holds HOSTS[3] INVALID (found cheating at inference): confirmed in the race, it weighs nothing at set
    validators, and the others' weights go to x/stake."""
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        invalid = poc_pb2.HostRecord(host=address_of(HOSTS[3]), status=poc_pb2.HOST_STATUS_INVALID)
        chain.block(during=lambda ctx: chain.app.poc_keeper.set_host(ctx, invalid))
        validate_all(chain, 1)
        blocks_to(chain, 12)
        response = chain.block()  # 13: set validators
        result = weights(chain, 1)
        assert {h.host: (h.weight, h.outcome) for h in result.hosts} == {
            address_of(k): (0 if i == 3 else 50 + 10 * i, sprint_pb2.OUTCOME_CONFIRMED) for i, k in enumerate(HOSTS)
        }
        assert events(response, "sprint_weight_withheld") == [{"epoch": "1", "host": address_of(HOSTS[3])}]
        assert stake_weights(chain, 1) == {address_of(k): 50 + 10 * i for i, k in enumerate(HOSTS[:3])}
        assert (consensus_key(3), 0) in updates(response)


def test_fraud_is_slashed_jailed_and_paid_to_the_finders(tmp_path: Path) -> None:
    """Host 3 is found fraudulent by hosts 0 and 1 (200 of the 300 validating power: more than 1/3); host 2 judges
    it valid. It loses 20% of its collateral, split 100/100 between the finders (rounded down), the rest to the
    pool; it is jailed and out of the set; the supply is unchanged."""
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        supply = chain.supply()
        balances = [chain.balance(operator(k)) for k in HOSTS]
        in_pool = chain.balance(module_address(pool_keys.POOL_ACCOUNT))
        blocks_to(chain, 11)
        k_star = fraud_threshold(SAMPLES, Fraction(1, 100), Fraction(1, 10**6))
        validate_all(chain, 1, {(0, 3): k_star, (1, 3): SAMPLES, (2, 3): k_star - 1})
        blocks_to(chain, 12)
        response = chain.block()
        hosts = {h.host: h for h in weights(chain, 1).hosts}
        fraud = hosts[address_of(HOSTS[3])]
        slashed = 100 * GNK // 5
        assert (fraud.outcome, fraud.weight, fraud.fraud_power, fraud.valid_power) == (
            sprint_pb2.OUTCOME_FRAUD,
            0,
            200,
            100,
        )
        assert fraud.slashed == str(slashed)
        assert collateral(chain, HOSTS[3]) == (100 * GNK - slashed, 0)
        paid = [chain.balance(operator(k)) - b for k, b in zip(HOSTS, balances)]
        assert paid == [slashed // 2, slashed // 2, 0, 0]
        assert chain.balance(module_address(pool_keys.POOL_ACCOUNT)) - in_pool == slashed - 2 * (slashed // 2)
        assert chain.supply() == supply
        assert events(response, "slash")[0]["reason"] == "sprint_fraud"
        assert (consensus_key(3), 0) in updates(response)
        assert address_of(HOSTS[3]) not in stake_weights(chain, 1)
        assert weights(chain, 1).total_weight == 180


def test_unconfirmed_hosts_weigh_nothing_and_are_not_slashed(tmp_path: Path) -> None:
    """Host 2 is validated by host 0 alone (100 of the others' 300: no quorum, which needs more than half); host 3
    is judged valid by hosts 0 and 1 and fraudulent by host 2 (exactly 2/3 and 1/3 of the validating 300: neither
    more). Both are unconfirmed: weight 0, collateral untouched. Hosts 0 and 1, validated by a quorum of two
    (200 of 300) that judged them valid, are confirmed; but holding 200 of the set's 400, not more than 2/3, they
    do not take the set over: the previous weights carry over."""
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        blocks_to(chain, 11)
        k_star = fraud_threshold(SAMPLES, Fraction(1, 100), Fraction(1, 10**6))
        validate_all(chain, 1, {(2, 3): k_star}, missing=[(1, 2), (3, 2), (3, 0), (3, 1)])
        blocks_to(chain, 13)
        hosts = {h.host: h for h in weights(chain, 1).hosts}
        assert [(hosts[address_of(k)].outcome, hosts[address_of(k)].weight) for k in HOSTS] == [
            (sprint_pb2.OUTCOME_CONFIRMED, 50),
            (sprint_pb2.OUTCOME_CONFIRMED, 60),
            (sprint_pb2.OUTCOME_UNCONFIRMED, 0),
            (sprint_pb2.OUTCOME_UNCONFIRMED, 0),
        ]
        assert (hosts[address_of(HOSTS[3])].valid_power, hosts[address_of(HOSTS[3])].fraud_power) == (200, 100)
        assert collateral(chain, HOSTS[2]) == collateral(chain, HOSTS[3]) == (100 * GNK, 0)
        result = weights(chain, 1)
        assert result.carried_over and result.total_weight == 400
        assert stake_weights(chain, 1) == {address_of(k): 100 for k in HOSTS}


def test_a_race_confirming_too_little_of_the_set_carries_the_weights_over(tmp_path: Path) -> None:
    """Only host 0 commits (a cold start where the others missed the race): confirmed by all three others, it holds
    100 of the set's 400, so the set is not handed to it: epoch 0's weights carry over."""
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 0, 0, 0])
        blocks_to(chain, 11)
        validate_all(chain, 1, missing=[(v, h) for v in range(4) for h in range(1, 4)])
        blocks_to(chain, 12)
        response = chain.block()
        result = weights(chain, 1)
        assert [(h.outcome, h.weight) for h in result.hosts] == [(sprint_pb2.OUTCOME_CONFIRMED, 50)]
        assert result.carried_over
        assert events(response, "sprint_carry_over") == [{"epoch": "1", "hosts": "4", "confirmed_power": "100/400"}]
        assert stake_weights(chain, 1) == {address_of(k): 100 for k in HOSTS} and updates(response) == []


def test_no_confirmed_weight_carries_the_previous_weights_over(tmp_path: Path) -> None:
    """Every host commits but nobody validates: nothing is confirmed, so epoch 0's weights (100 each) carry
    over, with an event, and the validator set stays."""
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        blocks_to(chain, 12)
        response = chain.block()
        result = weights(chain, 1)
        assert result.carried_over and result.total_weight == 400
        assert events(response, "sprint_carry_over") == [{"epoch": "1", "hosts": "4", "confirmed_power": "0/400"}]
        assert stake_weights(chain, 1) == {address_of(k): 100 for k in HOSTS}
        assert updates(response) == []


def test_before_the_first_race_collateral_stands_in_and_after_it_weights_carry_over(tmp_path: Path) -> None:
    """Epoch 1: nobody commits, and the race never ran: x/stake's collateral weights (host 0 deposited 20 GNK, so
    120). Epoch 2 is raced and decided. Epoch 3: nobody commits: epoch 2's weights carry over."""
    with sprint_chain(tmp_path / "db") as chain:
        blocks_to(chain, 9)
        assert deliver(chain, HOSTS[0], deposit(HOSTS[0], 20 * GNK))[0].code == 0
        blocks_to(chain, 12)
        response = chain.block()
        assert events(response, "sprint_no_race") == [{"epoch": "1"}]
        assert weights(chain, 1).hosts == []
        assert stake_weights(chain, 1) == {address_of(k): 120 if i == 0 else 100 for i, k in enumerate(HOSTS)}
        run_race(chain, [50, 60, 70, 80], epoch=2)
        validate_all(chain, 2)
        blocks_to(chain, 20)
        response = chain.block()
        assert weights(chain, 2).total_weight == 260 and events(response, "sprint_no_race") == []
        blocks_to(chain, 28)
        response = chain.block()
        assert events(response, "sprint_carry_over") == [{"epoch": "3", "hosts": "4", "confirmed_power": "0/260"}]
        result = weights(chain, 3)
        assert result.carried_over and result.hosts == [] and result.total_weight == 260
        assert stake_weights(chain, 3) == {address_of(k): 50 + 10 * i for i, k in enumerate(HOSTS)}


LONG_EPOCHS = {
    "epoch_length": "40",
    "race_validation_offset": "12",
    "set_validators_offset": "24",
    "inference_offset": "25",
}
"""Epoch 0: heights 1–40; epoch 1: race 41–52, race validation 53–64, set validators 65."""


def sprint_state(chain: InProcessChain) -> dict[str, Any]:
    """The module's state, as its genesis export."""
    return sprint_genesis.export_genesis(chain.context(), chain.app.sprint_keeper)


def messages_state(chain: InProcessChain) -> tuple[Any, Any]:
    """What messages write: the commitments and validations (the stages' randomness comes with blocks)."""
    state = sprint_state(chain)
    return state.get("commitments"), state.get("validations")


def refused(chain: InProcessChain, key: secp256k1.PrivateKey, msg: Any, code: int) -> None:
    """``msg`` alone in the next block: refused with ``code`` (codespace sprint), x/sprint's state unchanged."""
    before = messages_state(chain)
    result, _ = deliver(chain, key, msg)
    assert (result.codespace, result.code) == ("sprint", code), result.log
    assert messages_state(chain) == before


def test_bad_commitments_and_validations_are_refused_and_change_nothing(tmp_path: Path) -> None:
    host0, host1 = address_of(HOSTS[0]), address_of(HOSTS[1])

    def commit_of(key: secp256k1.PrivateKey, count: int, epoch: int = 1, params_hash: bytes = HASH) -> Any:
        return commit_message(address_of(key), epoch, root(KEYS.index(key)), count, params_hash)

    def validation(key: secp256k1.PrivateKey, host: str, samples: int = SAMPLES, failures: int = 0) -> Any:
        return validation_message(address_of(key), 1, host, samples, failures)

    with sprint_chain(tmp_path / "db", epochs=LONG_EPOCHS) as chain:
        blocks_to(chain, 38)
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 5), 4)  # early: epoch 1 has not begun
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 5, epoch=0), 3)  # epoch 0 has no race stage
        assert chain.height == 40
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 5, epoch=2), 4)  # 41
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 5, params_hash=b"\x02" * 32), 5)
        refused(chain, OUTSIDER, commit_of(OUTSIDER, 5), 2)
        short_root = commit_of(HOSTS[0], 5)
        short_root.root = b"\x01" * 31
        refused(chain, HOSTS[0], short_root, 7)
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 0), 6)
        assert deliver(chain, HOSTS[0], commit_of(HOSTS[0], 30))[0].code == 0
        refused(chain, HOSTS[0], commit_of(HOSTS[0], 29), 8)  # a later commitment may not shrink
        assert deliver(chain, HOSTS[0], commit_of(HOSTS[0], 31))[0].code == 0
        refused(chain, HOSTS[1], validation(HOSTS[1], host0), 3)  # validation during the race
        assert deliver(chain, HOSTS[1], commit_of(HOSTS[1], 40))[0].code == 0
        assert chain.height == 50
        [replaced] = [c for c in sprint_state(chain)["commitments"] if c["host"] == host0]
        assert replaced["count"] == "31"
        blocks_to(chain, 52)
        refused(chain, HOSTS[2], commit_of(HOSTS[2], 5), 3)  # 53: late, the validation stage began
        refused(chain, HOSTS[0], validation(HOSTS[0], host0), 11)  # itself
        refused(chain, OUTSIDER, validation(OUTSIDER, host0), 10)  # no power
        refused(chain, HOSTS[0], validation(HOSTS[0], address_of(HOSTS[2])), 13)  # host 2 never committed
        refused(chain, HOSTS[0], validation(HOSTS[0], host1, samples=SAMPLES - 1), 14)
        refused(chain, HOSTS[0], validation(HOSTS[0], host1, failures=SAMPLES + 1), 15)
        result, _ = deliver(chain, HOSTS[0], validation(HOSTS[0], host1))
        assert result.code == 0, result.log
        refused(chain, HOSTS[0], validation(HOSTS[0], host1, failures=1), 12)  # twice
        refused(chain, HOSTS[0], validation_message(host0, 2, host1, SAMPLES, 0), 4)  # another epoch
        assert chain.height < 65


def test_the_verdict_threshold_is_the_ml_nodes_binomial_rule() -> None:
    """The chain's integer k*(n) equals the ML node's exact-fraction one, over sizes and rates."""
    for n in (1, 2, 10, 99, 145, 291, 394, 1000):
        for p0, alpha in (
            (Fraction(1, 100), Fraction(1, 10**6)),
            (Fraction(0), Fraction(1, 10**6)),
            (Fraction(1, 3), Fraction(1, 2)),
        ):
            assert fraud_threshold(n, p0, alpha) == threshold(n, p0, alpha), (n, p0, alpha)
    assert fraud_threshold(145, Fraction(1, 100), Fraction(1, 10**6)) == 11


def test_the_default_params_hash_is_the_ml_nodes_default_race() -> None:
    assert HASH == race_params_hash(RACE_PRESETS["default"])
    assert HASH != race_params_hash(RACE_PRESETS["tiny"])


def test_genesis_exports_and_imports_the_race_state(tmp_path: Path) -> None:
    with sprint_chain(tmp_path / "db") as chain:
        run_race(chain, [50, 60, 70, 80])
        blocks_to(chain, 11)
        validate_all(chain, 1)
        blocks_to(chain, 13)
        exported = sprint_state(chain)
        assert len(exported["commitments"]) == 4 and len(exported["validations"]) == 12
        assert len(exported["races"]) == 1 and len(exported["results"]) == 1
    with sprint_chain(tmp_path / "db2", extra={"sprint": exported}) as chain:
        assert sprint_state(chain) == exported
    bad = dict(exported, commitments=exported["commitments"][1:])
    with pytest.raises(Exception, match="has no commitment"):
        sprint_chain(tmp_path / "db3", extra={"sprint": bad})


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["commit", "x", "00", "1", "00"], "invalid epoch 'x'"),
        (["commit", "1", "zz", "1", "00"], "invalid root 'zz': expected hex"),
        (["validate", "1", "gonka1host", "145", "-1"], "invalid failures '-1'"),
    ],
)
def test_cli_refuses_bad_input_in_one_line(args: list[str], words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gonkad", "tx", "sprint", *args, "--from", "nobody"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: ") and words in lines[0], lines
