"""x/learning's money on an in-process app: the budget escrowed, verifiers drawn and settling checkpoints by
weight, losers slashed to the winners, shares claimed through vesting, refunds, the refusals (each with its code
and no state changed), a model registered only from a finished valid run, the escrow invariant and genesis.

The hosts are tests/test_learning.py's (W1, W2, V1, V2, of different power); every amount is checked exactly and
the supply never moves (reward issuance is off).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message
from test_learning import (
    CREATOR,
    OUTSIDER,
    PARAMS,
    SHARE,
    V1,
    V2,
    W1,
    W2,
    LearningChain,
    addr,
    assert_refused,
    commit,
    create_run,
    h,
    module_account,
    verdict,
)

from gonkad import genesis
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.inference.v1 import tx_pb2 as inference_tx
from protogen.gonka.learning.v1 import learning_pb2, tx_pb2
from sdk.address import module_address
from sdk.coins import make_coins
from sdk.crypto import bech32, secp256k1
from x.learning import invariants, keys
from x.learning.module import LearningModule
from x.learning.params import default_params, validate_params
from x.pool import keys as pool_keys

HOST_KEYS = {addr(k): k for k in (W1, W2, V1, V2)}
POOL = bech32.encode(module_address(pool_keys.POOL_ACCOUNT))
TWO = {**PARAMS, "verifiers_per_checkpoint": 2, "verdict_window": 5}
"""Two verifiers a checkpoint: among three other hosts, one is not drawn."""


def chain_with(
    path: Path, params: dict[str, Any], escrow: int = 0, state: dict[str, Any] | None = None
) -> LearningChain:
    learning = state or {**genesis.default_app_state()["learning"], "params": params}
    return LearningChain(path, learning, escrow, authority=bech32.decode(addr(OUTSIDER)))


def run_of(workers: list[secp256k1.PrivateKey], rounds: int = 1) -> tx_pb2.MsgCreateTrainingRun:
    """A run paying SHARE per worker and round, with the largest remainder (``rounds × workers − 1``) left over."""
    budget = (SHARE + 1) * rounds * len(workers) - 1
    return create_run([addr(w) for w in workers], rounds=rounds, budget=str(budget))


def send(chain: LearningChain, key: secp256k1.PrivateKey, msg: Message) -> abci.ResponseFinalizeBlock:
    """One transaction in its own block, which must accept it; the block (its end block's events too)."""
    reply = chain.block([chain.sign(key, msg)])
    [result] = reply.tx_results
    assert result.code == 0, result.log
    return reply


def block_events(reply: abci.ResponseFinalizeBlock, event_type: str) -> list[dict[str, str]]:
    """The block's events of a type, its transactions' first, then its end block's."""
    every = [*(e for result in reply.tx_results for e in result.events), *reply.events]
    return [{a.key: a.value for a in e.attributes} for e in every if e.type == event_type]


def checkpoint(chain: LearningChain, worker: secp256k1.PrivateKey, run_id: int = 1, round_: int = 0) -> Any:
    found = chain.app.learning_keeper.get_checkpoint(chain.context(), run_id, round_, addr(worker))
    assert found is not None
    return found


def run(chain: LearningChain, run_id: int = 1) -> learning_pb2.TrainingRun:
    found = chain.app.learning_keeper.get_run(chain.context(), run_id)
    assert found is not None
    return found


def collateral(chain: LearningChain, address: str) -> int:
    return int(chain.app.stake_keeper.get_host(chain.context(), bech32.decode(address)).collateral)


def locked(chain: LearningChain, key: secp256k1.PrivateKey) -> int:
    return dict(chain.app.vesting_keeper.locked_coins(chain.context(), bech32.decode(addr(key)))).get("ngonka", 0)


def claim(worker: secp256k1.PrivateKey, run_id: int = 1, round_: int = 0) -> tx_pb2.MsgClaimTrainingReward:
    return tx_pb2.MsgClaimTrainingReward(worker=addr(worker), run_id=run_id, round=round_)


def drawn(chain: LearningChain, worker: secp256k1.PrivateKey, run_id: int = 1) -> list[tuple[str, int]]:
    """The checkpoint's verifiers (address, weight), the heaviest first."""
    verifiers = checkpoint(chain, worker, run_id).verifiers
    return sorted(((v.address, v.weight) for v in verifiers), key=lambda v: -v[1])


def test_a_run_pays_valid_work_refunds_the_rest_and_slashes_the_losers(tmp_path: Path) -> None:
    """W1's checkpoint found valid by both its verifiers; W2's found invalid by the heavier of its two, the
    lighter (which said valid) contradicting: W2 and the lighter slashed to the heavier, W2's share and the
    remainder refunded, W1 paid through vesting once."""
    chain = chain_with(tmp_path / "db", TWO)
    supply, creator = chain.supply(), chain.balance(addr(CREATOR))
    send(chain, CREATOR, run_of([W1, W2]))
    assert chain.balance(addr(CREATOR)) == creator - (2 * SHARE + 1)
    assert chain.balance(module_account()) == 2 * SHARE + 1

    reply = send(chain, W1, commit(W1))
    verifiers = drawn(chain, W1)
    [event] = block_events(reply, "draw_verifiers")
    assert set(event["verifiers"].split(",")) == {a for a, _ in verifiers} and len(verifiers) == 2
    [left_out] = set(HOST_KEYS) - {a for a, _ in verifiers} - {addr(W1)}
    powers = chain.app.stake_keeper.validator_powers(chain.context())
    assert all(powers[bech32.decode(a)] == w for a, w in verifiers)
    log = f"{left_out} on run 1 round 0: verifier is not drawn for this checkpoint"
    assert_refused(chain, HOST_KEYS[left_out], verdict(HOST_KEYS[left_out], W1), "learning", 17, log, False)
    assert_refused(
        chain,
        W1,
        claim(W1),
        "learning",
        19,
        f"run 1 round 0 worker {addr(W1)} is PENDING: checkpoint is not valid",
        False,
    )
    send(chain, HOST_KEYS[verifiers[0][0]], verdict(HOST_KEYS[verifiers[0][0]], W1))
    assert checkpoint(chain, W1).outcome == learning_pb2.OUTCOME_PENDING
    reply = send(chain, HOST_KEYS[verifiers[1][0]], verdict(HOST_KEYS[verifiers[1][0]], W1))
    assert block_events(reply, "settle_checkpoint") == [
        {"run_id": "1", "round": "0", "worker": addr(W1), "outcome": "VALID", "slashed": "", "refunded": "0ngonka"}
    ]
    assert checkpoint(chain, W1).settle_height == chain.height
    late = HOST_KEYS[verifiers[0][0]]
    log = f"run 1 round 0 worker {addr(W1)} is VALID since height {chain.height}: checkpoint is already settled"
    assert_refused(chain, late, verdict(late, W1), "learning", 18, log, False)

    send(chain, W2, commit(W2))
    (heavy, _), (light, _) = drawn(chain, W2)
    before = {a: (chain.balance(a), collateral(chain, a)) for a in (heavy, light, addr(W2))}
    pool, creator = chain.balance(POOL), chain.balance(addr(CREATOR))
    send(chain, HOST_KEYS[heavy], verdict(HOST_KEYS[heavy], W2, valid=False))
    reply = send(chain, HOST_KEYS[light], verdict(HOST_KEYS[light], W2))
    taken_w2, taken_light = before[addr(W2)][1] // 5, before[light][1] // 5
    assert block_events(reply, "settle_checkpoint") == [
        {
            "run_id": "1",
            "round": "0",
            "worker": addr(W2),
            "outcome": "INVALID",
            "slashed": f"{addr(W2)}:{taken_w2},{light}:{taken_light}",
            "refunded": f"{SHARE}ngonka",
        }
    ]
    assert block_events(reply, "finish_run") == [{"run_id": "1", "refunded": "1ngonka"}]
    assert collateral(chain, addr(W2)) == before[addr(W2)][1] - taken_w2
    assert collateral(chain, light) == before[light][1] - taken_light
    assert chain.balance(heavy) == before[heavy][0] + taken_w2 + taken_light  # the only winner takes it all
    assert chain.balance(POOL) == pool
    assert chain.balance(addr(CREATOR)) == creator + SHARE + 1
    finished = run(chain)
    assert (finished.status, finished.finished_height) == (learning_pb2.RUN_STATUS_FINISHED, chain.height)
    assert (finished.paid, finished.refunded) == ("0", str(SHARE + 1))
    assert chain.balance(module_account()) == SHARE  # owed to W1's VALID checkpoint

    w1, w1_locked = chain.balance(addr(W1)), locked(chain, W1)
    result = chain.ok(W1, claim(W1))
    assert {a.key: a.value for e in result.events if e.type == "claim_reward" for a in e.attributes} == {
        "run_id": "1",
        "round": "0",
        "worker": addr(W1),
        "amount": f"{SHARE}ngonka",
    }
    assert (chain.balance(addr(W1)), locked(chain, W1)) == (w1 + SHARE, w1_locked + SHARE)
    assert chain.balance(module_account()) == 0 and run(chain).paid == str(SHARE) and checkpoint(chain, W1).paid
    log = f"run 1 round 0 worker {addr(W1)}: reward already paid"
    assert_refused(chain, W1, claim(W1), "learning", 20, log, False)
    log = f"run 1 round 0 worker {addr(W2)} is INVALID: checkpoint is not valid"
    assert_refused(chain, W2, claim(W2), "learning", 19, log, False)
    log = f"run 1 finished at height {finished.finished_height}: training run is finished"
    assert_refused(chain, W1, commit(W1), "learning", 21, log, False)
    assert chain.supply() == supply
    assert invariants.escrow_held(chain.app.learning_keeper, chain.context()) is None


def test_the_majority_by_weight_clears_a_checkpoint_and_the_dissenter_pays_pro_rata(tmp_path: Path) -> None:
    """Three verifiers (W2, V1, V2): V2 alone finds W1's checkpoint invalid, without half the weight: VALID, V2
    slashed, paid to W2 and V1 pro rata to their weight (rounded down), the rest to the community pool. Then a
    checkpoint on which only V2 speaks (invalid) settles VALID when its window closes; V2's slash goes all to the
    pool (no verifier on the winning side)."""
    chain = chain_with(tmp_path / "db", {**PARAMS, "verdict_window": 4})
    supply = chain.supply()
    send(chain, CREATOR, run_of([W1]))
    send(chain, W1, commit(W1))
    weights = dict(drawn(chain, W1))
    assert set(weights) == {addr(W2), addr(V1), addr(V2)}
    assert 2 * weights[addr(V2)] <= sum(weights.values())
    send(chain, W2, verdict(W2, W1))
    send(chain, V2, verdict(V2, W1, valid=False))
    balances, pool, stake = {a: chain.balance(a) for a in weights}, chain.balance(POOL), collateral(chain, addr(V2))
    reply = send(chain, V1, verdict(V1, W1))
    taken = stake // 5
    [settled] = block_events(reply, "settle_checkpoint")
    assert (settled["outcome"], settled["slashed"]) == ("VALID", f"{addr(V2)}:{taken}")
    winners = weights[addr(W2)] + weights[addr(V1)]
    to_w2, to_v1 = taken * weights[addr(W2)] // winners, taken * weights[addr(V1)] // winners
    assert chain.balance(addr(W2)) == balances[addr(W2)] + to_w2
    assert chain.balance(addr(V1)) == balances[addr(V1)] + to_v1
    assert chain.balance(addr(V2)) == balances[addr(V2)]
    assert chain.balance(POOL) == pool + taken - to_w2 - to_v1 and taken - to_w2 - to_v1 > 0
    assert run(chain).status == learning_pb2.RUN_STATUS_FINISHED

    send(chain, CREATOR, run_of([W1]))
    send(chain, W1, commit(W1, run_id=2))
    deadline = checkpoint(chain, W1, run_id=2).deadline_height
    send(chain, V2, verdict(V2, W1, valid=False, run_id=2))
    pool, stake = chain.balance(POOL), collateral(chain, addr(V2))
    while chain.height < deadline - 1:
        chain.block()
    assert checkpoint(chain, W1, run_id=2).outcome == learning_pb2.OUTCOME_PENDING
    reply = chain.block()
    [settled] = block_events(reply, "settle_checkpoint")
    assert (settled["outcome"], settled["slashed"]) == ("VALID", f"{addr(V2)}:{stake // 5}")
    assert chain.balance(POOL) == pool + stake // 5
    assert chain.supply() == supply


def test_a_trained_model_is_registered_only_from_a_finished_valid_run(tmp_path: Path) -> None:
    chain = chain_with(tmp_path / "db", {**PARAMS, "replay_rate_ppm": 0})
    send(chain, CREATOR, run_of([W1, W2]))
    send(chain, W1, commit(W1))
    assert checkpoint(chain, W1).outcome == learning_pb2.OUTCOME_VALID and not checkpoint(chain, W1).verifiers
    weights = h("global 0").hex()

    def register(sha: str, run_id: int = 1) -> inference_tx.MsgRegisterModel:
        model = inference_pb2.Model(
            id=f"trained@sha256:{sha}",
            name="trained",
            weights_sha256=sha,
            context_length=2048,
            price_per_token=1,
            training_run_id=run_id,
        )
        return inference_tx.MsgRegisterModel(authority=addr(OUTSIDER), model=model)

    def refused(msg: Message, code: int, log: str) -> None:
        before = dict(chain.app.store.iterate(b"inference/"))
        result = chain.deliver(OUTSIDER, msg)
        assert (result.codespace, result.code, result.log) == ("inference", code, log)
        assert dict(chain.app.store.iterate(b"inference/")) == before

    refused(register(weights), 22, "training run 1 is ACTIVE: training run is not finished")
    refused(register(weights, 9), 22, "training run 9 is missing: training run is not finished")
    send(chain, W2, commit(W2))
    assert run(chain).status == learning_pb2.RUN_STATUS_FINISHED
    refused(
        register(h("other").hex()),
        24,
        f"{h('other').hex()} is not run 1's final weights {weights}: "
        "weights differ from the training run's final global weights",
    )
    chain.ok(OUTSIDER, register(weights))
    assert chain.app.inference_keeper.get_model(chain.context(), f"trained@sha256:{weights}") is not None

    strict = chain_with(tmp_path / "strict", TWO)
    send(strict, CREATOR, run_of([W1]))
    send(strict, W1, commit(W1))
    for address, _ in drawn(strict, W1):
        send(strict, HOST_KEYS[address], verdict(HOST_KEYS[address], W1, valid=False))
    assert run(strict).status == learning_pb2.RUN_STATUS_FINISHED
    result = strict.deliver(OUTSIDER, register(weights))
    assert (result.codespace, result.code) == ("inference", 23)
    assert result.log == f"run 1 round 0: {addr(W1)}: training run's final round has an invalid checkpoint"


@pytest.mark.parametrize(
    "msg, code, log",
    [
        (create_run([addr(W1), addr(OUTSIDER)]), 16, "is not a host with collateral"),
        (create_run(budget="3"), 3, "budget 3 is less than 1 per worker and round: invalid training run"),
        (create_run(budget="-1"), None, "malformed budget '-1'"),
    ],
)
def test_a_run_is_refused_unless_its_workers_are_hosts_and_its_budget_pays_each_round(
    tmp_path: Path, msg: tx_pb2.MsgCreateTrainingRun, code: int | None, log: str
) -> None:
    chain = chain_with(tmp_path / "db", PARAMS)
    learning, creator = chain.learning_state(), chain.balance(addr(CREATOR))
    result = chain.deliver(CREATOR, msg)
    assert result.code != 0 and log in result.log and (code is None or result.code == code)
    assert chain.learning_state() == learning and chain.balance(addr(CREATOR)) == creator


def test_escrow_invariant_holds_and_names_a_broken_balance(tmp_path: Path) -> None:
    chain = chain_with(tmp_path / "db", PARAMS)
    send(chain, CREATOR, run_of([W1]))
    keeper, ctx = chain.app.learning_keeper, chain.context()
    assert invariants.escrow_held(keeper, ctx) is None and invariants.pending_indexed(keeper, ctx) is None
    chain.app.bank_keeper.send_coins(ctx, bech32.decode(addr(CREATOR)), keeper.address, make_coins([("ngonka", 1)]))
    assert invariants.escrow_held(keeper, ctx) == (
        f"learning account holds {SHARE + 1}ngonka but the runs' budgets less paid and refunded are {SHARE}ngonka"
    )
    ctx.kv(keys.STORE_PREFIX).set(keys.pending_key(1, 0, bech32.decode(addr(W1))), b"\x01")
    assert "the pending index names a missing checkpoint of run 1 round 0" in (
        invariants.pending_indexed(keeper, ctx) or ""
    )


def test_genesis_round_trip_keeps_the_money_and_the_pending_draws(tmp_path: Path) -> None:
    """Exported with one checkpoint VALID and unclaimed and one PENDING: imported, the same state (the pending
    index rebuilt); the claim and the settlement go on there. A genesis whose account misses the escrow fails."""
    chain = chain_with(tmp_path / "db", TWO)
    send(chain, CREATOR, run_of([W1, W2]))
    send(chain, W1, commit(W1))
    for address, _ in drawn(chain, W1):
        send(chain, HOST_KEYS[address], verdict(HOST_KEYS[address], W1))
    send(chain, W2, commit(W2))
    state = json.loads(json.dumps(LearningModule(chain.app.learning_keeper).export_genesis(chain.context())))
    escrow = chain.balance(module_account())
    assert escrow == 2 * SHARE + 1
    imported = chain_with(tmp_path / "imported", TWO, escrow, state)
    assert imported.learning_state() == chain.learning_state()
    imported.ok(W1, claim(W1))
    for address, _ in drawn(imported, W2):
        send(imported, HOST_KEYS[address], verdict(HOST_KEYS[address], W2))
    assert run(imported).status == learning_pb2.RUN_STATUS_FINISHED
    with pytest.raises(ValueError, match="learning account holds 1ngonka but the runs' budgets"):
        chain_with(tmp_path / "short", TWO, 1, state)
    paid = {**state, "runs": [{**state["runs"][0], "paid": str(3 * SHARE)}]}
    with pytest.raises(ValueError, match="paid and refunded exceed the budget"):
        chain_with(tmp_path / "overpaid", TWO, escrow, paid)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"replay_rate_ppm": 1_000_001}, "replay_rate_ppm must be at most 1000000"),
        ({"verifiers_per_checkpoint": 101}, "verifiers_per_checkpoint must be at most 100"),
        ({"verdict_window": 0}, "verdict_window must be positive"),
        ({"learning_slash_fraction": "1.5"}, "learning_slash_fraction '1.5' must be in"),
        ({"payment_vesting_epochs": 0}, "payment_vesting_epochs must be in"),
        ({"denom": "x"}, "denom 'x' is not a valid denom"),
    ],
)
def test_invalid_params_are_refused(change: dict[str, Any], words: str) -> None:
    params = default_params()
    for field, value in change.items():
        setattr(params, field, value)
    with pytest.raises(ValueError, match=words):
        validate_params(params)
