"""Sprint race: determinism, calibration, the interval Merkle commitment, the binomial plan, and the
sampling verifier against an honest node and against each kind of cheat over 1,000 challenges."""

from __future__ import annotations

import hashlib
import math
import random
from fractions import Fraction
from typing import Any

import pytest
import torch
from fastapi import FastAPI
from fastapi.testclient import TestClient

from mlnode.config import ModelConfig
from mlnode.server import install_error_handlers
from mlnode.sprint.binomial import plan_samples, threshold, upper_tail
from mlnode.sprint.calibration import cap_fraction, distance_cdf, r_target
from mlnode.sprint.challenge import sample_indices
from mlnode.sprint.commitment import Commitment, commit, respond
from mlnode.sprint.merkle import EMPTY_ROOT, MerkleTree, Node, path_holds
from mlnode.sprint.params import RACE_PRESETS, RaceParams, race_params_hash, race_preset
from mlnode.sprint.proof import DISTANCE_SCALE, Proof
from mlnode.sprint.race import RaceModel, distances, nonce_inputs, run_race
from mlnode.sprint.routes import sprint_router
from mlnode.sprint.verifier import RaceVerdict, VerifyPolicy, verify, verify_proofs

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEST_PARAMS = RaceParams(
    transformer=ModelConfig(dim=16, n_layers=1, n_heads=2, ffn_dim=32, max_seq_len=8),
    input_length=4,
    batch_size=256,
    target_rate=0.25,
)
"""A race small enough that 6,000 verifications recompute their samples in well under a minute."""
SEED = hashlib.sha256(b"epoch block").digest()
PUBKEY = b"\x02" + hashlib.sha256(b"node key").digest()
OTHER_PUBKEY = b"\x03" + hashlib.sha256(b"another node key").digest()
NONCES = 1024
TRIALS = 1000
POLICY = VerifyPolicy()
F = POLICY.min_invalid_share


@pytest.fixture(scope="module")
def race() -> RaceModel:
    return RaceModel.build(TEST_PARAMS, SEED)


@pytest.fixture(scope="module")
def honest(race: RaceModel) -> list[Proof]:
    return run_race(race, PUBKEY, 0, NONCES)


def challenge(trial: int) -> bytes:
    """Distinct verifier randomness per trial, standing in for a later block hash."""
    return hashlib.sha256(b"later block" + trial.to_bytes(4, "big")).digest()


def trials(leaves: list[Proof], prover: RaceModel, verifier: RaceModel, pubkey: bytes = PUBKEY) -> list[RaceVerdict]:
    """The node commits to ``leaves`` under ``pubkey`` and answers TRIALS independent challenges."""
    tree = MerkleTree.build(leaves)
    commitment = Commitment(tree.root, len(leaves), prover.r_target, SEED, pubkey)
    return [
        verify(commitment, challenge(trial), respond(tree, challenge(trial), POLICY.plan.samples), verifier, POLICY)
        for trial in range(TRIALS)
    ]


def padding(honest_count: int, share: Fraction) -> int:
    """Invalid leaves to add to ``honest_count`` valid ones for an invalid share of at least ``share``."""
    return math.ceil(honest_count * share / (1 - share))


def fabricated(race: RaceModel, nonces: list[int], rng: random.Random) -> list[Proof]:
    """Nonces claimed as proofs with distances nobody computed (just under r_target)."""
    return [Proof(nonce, race.r_target - rng.randrange(1, DISTANCE_SCALE // 20)) for nonce in nonces]


def assert_caught(verdicts: list[RaceVerdict], invalid_share: Fraction) -> None:
    """Analytic detection ≥ 1 − β (≫ 99.9%) at this share, and at most 1 miss in 1,000 observed."""
    plan = POLICY.plan
    analytic_miss = 1 - upper_tail(plan.samples, invalid_share, plan.threshold)
    assert analytic_miss <= POLICY.max_miss < Fraction(1, 1000)
    misses = sum(not verdict.fraud for verdict in verdicts)
    assert len(verdicts) == TRIALS and misses <= 1
    observed_share = sum(v.failures for v in verdicts) / sum(v.samples for v in verdicts)
    assert observed_share >= float(invalid_share) - 0.01


# --- race: determinism and inputs


def test_race_is_a_function_of_seed_pubkey_and_nonces(race: RaceModel, honest: list[Proof]) -> None:
    again = RaceModel.build(TEST_PARAMS, SEED)
    state, state_again = race.model.state_dict(), again.model.state_dict()
    assert all(torch.equal(state[name], state_again[name]) for name in state)
    assert torch.equal(race.target, again.target) and race.r_target == again.r_target
    assert run_race(again, PUBKEY, 0, NONCES) == honest
    assert (
        commit(honest, race.r_target, SEED, PUBKEY)[0]
        == commit(run_race(race, PUBKEY, 0, NONCES), race.r_target, SEED, PUBKEY)[0]
    )
    other_epoch = RaceModel.build(TEST_PARAMS, hashlib.sha256(b"next epoch").digest())
    assert not torch.equal(race.target, other_epoch.target)


def test_another_key_gets_other_inputs_and_distances(race: RaceModel) -> None:
    nonces = list(range(64))
    tokens, permutations = nonce_inputs(race, PUBKEY, nonces)
    other_tokens, other_permutations = nonce_inputs(race, OTHER_PUBKEY, nonces)
    assert (tokens != other_tokens).any(dim=1).all() and (permutations != other_permutations).any(dim=1).all()
    assert sorted(permutations[0].tolist()) == list(range(TEST_PARAMS.transformer.dim))
    ours, theirs = distances(race, PUBKEY, nonces), distances(race, OTHER_PUBKEY, nonces)
    assert sum(a != b for a, b in zip(ours, theirs)) == len(nonces)


def test_recomputation_agrees_across_batch_sizes_and_threads(race: RaceModel) -> None:
    nonces = list(range(300))
    reference = distances(race, PUBKEY, nonces)
    for batch_size in (1, 7, 300):
        other = RaceModel.build(TEST_PARAMS.model_copy(update={"batch_size": batch_size}), SEED)
        assert max(abs(a - b) for a, b in zip(distances(other, PUBKEY, nonces), reference)) <= POLICY.tolerance // 10
    torch.set_num_threads(2)
    try:
        assert max(abs(a - b) for a, b in zip(distances(race, PUBKEY, nonces), reference)) <= POLICY.tolerance // 10
    finally:
        torch.set_num_threads(1)


# --- r_target


def test_r_target_is_analytic_and_the_same_on_every_call(race: RaceModel) -> None:
    assert r_target(16, 0.25) == r_target(16, 0.25) == race.r_target
    assert distance_cdf(16, race.r_target) <= 0.25 < distance_cdf(16, race.r_target + 1)
    assert r_target(256, 1e-3) == 1_271_295_316


def test_cap_fraction_matches_closed_forms() -> None:
    """dim 3: Archimedes' hat-box theorem; any dim: the hemisphere holds half."""
    for c in (-0.5, 0.0, 0.3, 0.9):
        assert cap_fraction(3, c) == pytest.approx((1 - c) / 2, abs=1e-12)
    for dim in (8, 16, 256, 1024):
        assert cap_fraction(dim, 0.0) == pytest.approx(0.5, abs=1e-12)


def test_permuted_outputs_hit_the_analytic_proof_rate(race: RaceModel) -> None:
    """8,192 nonces at target rate 1/4: the observed rate is within 4σ (σ ≈ 0.005)."""
    rate = len(run_race(race, PUBKEY, 10_000, 8192)) / 8192
    assert abs(rate - TEST_PARAMS.target_rate) < 0.02


# --- interval Merkle tree


def test_every_leaf_path_holds_for_every_tree_size() -> None:
    for count in range(1, 18):
        leaves = [Proof(3 * i + 1, 10**9 + i) for i in range(count)]
        tree = MerkleTree.build(leaves)
        for index, leaf in enumerate(leaves):
            path = tree.path(index)
            assert path_holds(tree.root, count, index, leaf, path)
            assert count == 1 or not path_holds(tree.root, count, (index + 1) % count, leaf, path)
            assert not path_holds(tree.root, count, index, Proof(leaf.nonce, leaf.distance + 1), path)
    three = MerkleTree.build([Proof(1, 0), Proof(2, 0), Proof(3, 0)])
    assert len(three.path(2)) == 1, "the odd last node is promoted, not paired with a copy"
    assert MerkleTree.build([]).root == EMPTY_ROOT


def test_tampered_sibling_interval_fails() -> None:
    tree = MerkleTree.build([Proof(nonce, 5) for nonce in (10, 20, 30, 40)])
    path = tree.path(0)
    for forged in (Node(path[1].hash, path[1].lo, path[1].hi + 1), Node(path[1].hash, 50, 40)):
        assert not path_holds(tree.root, 4, 0, Proof(10, 5), (path[0], forged))


def test_passing_leaves_are_strictly_increasing_in_any_list() -> None:
    """Whatever a prover commits to (repeats, shuffles, a whole list twice), the leaves whose paths
    hold form a strictly increasing sequence: at most one leaf per distinct nonce passes."""
    rng = random.Random(7)
    base = sorted(rng.sample(range(10_000), 40))
    lists = [
        base + base,
        base + base[:10],
        sorted(base + base[::3]),
        rng.sample(base, len(base)),
        [rng.choice(base) for _ in range(60)],
    ]
    for leaves in lists:
        tree = MerkleTree.build([Proof(nonce, 0) for nonce in leaves])
        passing = [
            leaves[i]
            for i in range(len(leaves))
            if path_holds(tree.root, len(leaves), i, Proof(leaves[i], 0), tree.path(i))
        ]
        assert all(a < b for a, b in zip(passing, passing[1:]))
        assert len(passing) <= len(set(leaves))


def test_commit_accepts_only_an_honest_list(race: RaceModel, honest: list[Proof]) -> None:
    with pytest.raises(ValueError, match="increasing"):
        commit(honest + honest[:1], race.r_target, SEED, PUBKEY)
    with pytest.raises(ValueError, match="r_target"):
        commit([Proof(1, race.r_target)], race.r_target, SEED, PUBKEY)
    commitment, tree = commit(honest, race.r_target, SEED, PUBKEY)
    assert commitment == Commitment(tree.root, len(honest), race.r_target, SEED, PUBKEY)


# --- binomial plan


def test_binomial_tail_matches_direct_summation() -> None:
    p = Fraction(3, 10)
    for n in (1, 5, 20):
        for k in range(n + 2):
            direct = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
            assert upper_tail(n, p, k) == direct


def test_documented_plan() -> None:
    """p0 = 1%, α = 1e-6, f = 20%, β = 1e-5 → n = 145 samples, flag at k* = 11 failures."""
    plan = POLICY.plan
    assert (plan.samples, plan.threshold) == (145, 11)
    assert plan.false_flag == upper_tail(145, Fraction(1, 100), 11) <= Fraction(1, 10**6)
    assert upper_tail(145, Fraction(1, 100), 10) > Fraction(1, 10**6), "k* is the smallest such k"
    assert threshold(145, Fraction(1, 100), Fraction(1, 10**6)) == 11
    assert plan.miss == 1 - upper_tail(145, F, 11) <= Fraction(1, 10**5)
    assert 1 - plan.miss >= Fraction(999, 1000)
    smaller = plan_samples(POLICY.honest_mismatch, POLICY.false_flag, F, Fraction(1, 1000))
    assert smaller.samples == 99, "99 samples reach 99.9%; 145 leave a 100x margin"


# --- verifier: the honest node


def test_honest_node_is_never_flagged(race: RaceModel, honest: list[Proof]) -> None:
    """1,000 challenges, recomputed at a batch size (64) other than the prover's (256)."""
    verifier = RaceModel.build(TEST_PARAMS.model_copy(update={"batch_size": 64}), SEED)
    verdicts = trials(honest, race, verifier)
    assert not any(verdict.fraud for verdict in verdicts)
    assert all(verdict.failures == 0 and verdict.samples == POLICY.plan.samples for verdict in verdicts)


# --- verifier: cheats, each over 1,000 challenges


def test_fabricated_distances_are_caught(race: RaceModel) -> None:
    """(a) Random nonces claimed as proofs with distances that were never computed."""
    rng = random.Random(1)
    leaves = fabricated(race, sorted(rng.sample(range(10**6, 10**7), 300)), rng)
    assert_caught(trials(leaves, race, race), Fraction(1))


def test_padding_with_invalid_nonces_is_caught(race: RaceModel, honest: list[Proof]) -> None:
    """(b) Honest proofs padded with uncomputed nonces at the minimum invalid share f."""
    rng = random.Random(2)
    extra = fabricated(race, rng.sample(range(NONCES, 10 * NONCES), padding(len(honest), F)), rng)
    leaves = sorted(honest + extra)
    assert_caught(trials(leaves, race, race), Fraction(len(extra), len(leaves)))


def test_duplicated_nonces_are_caught(race: RaceModel, honest: list[Proof]) -> None:
    """(b) Duplicates at share f: half next to their originals, half as a block repeated at the end
    (which a check against the neighbour leaf alone would pass)."""
    copies = padding(len(honest), F)
    adjacent = set(random.Random(3).sample(range(len(honest)), copies // 2))
    leaves = [leaf for i, proof in enumerate(honest) for leaf in [proof] * (2 if i in adjacent else 1)]
    leaves += honest[: copies - copies // 2]
    assert_caught(trials(leaves, race, race), Fraction(copies, len(leaves)))


def test_another_keys_nonces_are_caught(race: RaceModel) -> None:
    """(c) All proofs computed under another node's key, committed under this one."""
    assert_caught(trials(run_race(race, OTHER_PUBKEY, 0, NONCES), race, race), Fraction(1))


def test_mixed_in_nonces_of_another_key_are_caught(race: RaceModel, honest: list[Proof]) -> None:
    """(c) Honest proofs mixed with another key's proofs (other nonces) at the minimum invalid share f."""
    borrowed = run_race(race, OTHER_PUBKEY, NONCES, 4 * NONCES)[: padding(len(honest), F)]
    leaves = sorted(honest + borrowed)
    assert_caught(trials(leaves, race, race), Fraction(len(borrowed), len(leaves)))


def test_commitment_level_problems(race: RaceModel, honest: list[Proof]) -> None:
    commitment, tree = commit(honest, race.r_target, SEED, PUBKEY)
    openings = respond(tree, challenge(0), POLICY.plan.samples)
    inflated = Commitment(commitment.root, commitment.count, race.r_target + 1, SEED, PUBKEY)
    assert verify(inflated, challenge(0), openings, race).reason.startswith("commitment r_target")
    assert verify(commitment, challenge(0), [], race).failures == POLICY.plan.samples
    assert verify_proofs(commitment, challenge(0), honest[1:], race).fraud
    assert not verify_proofs(commitment, challenge(0), honest, race).fraud
    empty, _ = commit([], race.r_target, SEED, PUBKEY)
    assert verify(empty, challenge(0), [], race) == RaceVerdict(0, 0, POLICY.plan.threshold, False)


# --- HTTP routes


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    app.include_router(sprint_router(TEST_PARAMS))
    install_error_handlers(app)
    return TestClient(app)


def run_body(**overrides: object) -> dict[str, object]:
    return {"seed": SEED.hex(), "pubkey": PUBKEY.hex(), "nonce_start": 0, "nonce_count": NONCES, **overrides}


def test_run_then_verify_over_http(client: TestClient, race: RaceModel, honest: list[Proof]) -> None:
    ran = client.post("/v1/sprint/run", json=run_body())
    assert ran.status_code == 200
    body = ran.json()
    commitment, tree = commit(honest, race.r_target, SEED, PUBKEY)
    assert body["commitment"] == {
        "root": commitment.root.hex(),
        "count": len(honest),
        "r_target": race.r_target,
        "seed": SEED.hex(),
        "pubkey": PUBKEY.hex(),
    }
    assert body["proofs"] == [{"nonce": p.nonce, "distance": p.distance} for p in honest]
    randomness = challenge(0)
    full = client.post(
        "/v1/sprint/verify",
        json={"commitment": body["commitment"], "randomness": randomness.hex(), "proofs": body["proofs"]},
    )
    assert full.json() == {"fraud": False, "failures": 0, "samples": 145, "threshold": 11, "reason": ""}
    openings = [
        {
            "index": o.index,
            "nonce": o.proof.nonce,
            "distance": o.proof.distance,
            "path": [{"hash": n.hash.hex(), "lo": n.lo, "hi": n.hi} for n in o.path],
        }
        for o in respond(tree, randomness, POLICY.plan.samples)
    ]
    sampled = client.post(
        "/v1/sprint/verify",
        json={"commitment": body["commitment"], "randomness": randomness.hex(), "openings": openings},
    )
    assert sampled.json() == full.json()
    forged = [{**opening, "distance": opening["distance"] + 10**6} for opening in openings]
    caught = client.post(
        "/v1/sprint/verify", json={"commitment": body["commitment"], "randomness": randomness.hex(), "openings": forged}
    )
    assert caught.json()["fraud"] and caught.json()["failures"] == 145


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (run_body(seed="zz" * 32), "seed"),
        (run_body(seed="ab" * 31), "seed"),
        (run_body(pubkey="04" + "11" * 32), "pubkey"),
        (run_body(nonce_start=-1), "nonce_start"),
        (run_body(nonce_count=0), "nonce_count"),
        (run_body(nonce_count=1 << 30), "nonce_count"),
        (run_body(nonce_start=2**64 - 2, nonce_count=5), "nonce_count"),
        (run_body(extra=1), "extra"),
    ],
)
def test_run_rejects_bad_input_with_openai_errors(client: TestClient, body: dict[str, object], param: str) -> None:
    response = client.post("/v1/sprint/run", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["message"]
    assert error["code"] is None


def test_verify_rejects_bad_input(client: TestClient) -> None:
    commitment = {"root": "00" * 32, "count": 1, "r_target": 1, "seed": SEED.hex(), "pubkey": PUBKEY.hex()}
    neither = client.post("/v1/sprint/verify", json={"commitment": commitment, "randomness": "01"})
    assert neither.status_code == 400 and "exactly one" in neither.json()["error"]["message"]
    no_randomness = client.post("/v1/sprint/verify", json={"commitment": commitment, "randomness": "", "proofs": []})
    assert no_randomness.json()["error"]["param"] == "randomness"
    garbage = client.post("/v1/sprint/verify", content=b"{not json", headers={"content-type": "application/json"})
    assert garbage.status_code == 400 and garbage.json()["error"]["param"] is None


# --- presets, the params hash, /params and /open


TINY = RACE_PRESETS["tiny"]
DEFAULT_HASH = "b372d4180503bf51dd89fc4cdf7fcdbdc2207cf8a102a50ef6fc9b0a4ef0085a"
TINY_HASH = "31a8a1364c7e3d63f0872b717bae175a736f90187c8bf3b4335b028aaddbe224"
"""Pinned: a change to the canonical encoding (or to a preset) must show up here, not on the chain."""


def test_params_hash_covers_the_consensus_fields_only() -> None:
    assert RACE_PRESETS["default"] == RaceParams()
    assert race_params_hash(RaceParams()).hex() == DEFAULT_HASH
    assert race_params_hash(TINY).hex() == TINY_HASH
    assert race_params_hash(TINY.model_copy(update={"batch_size": 7})) == race_params_hash(TINY)
    rebuilt = RaceParams.model_validate(TINY.model_dump(mode="json"))
    assert race_params_hash(rebuilt) == race_params_hash(TINY)
    changes = [
        {"target_rate": 1 / 33},
        {"init_gain": 2.0000000000000004},  # the next double: repr keeps every bit
        {"input_length": 7},
        {"transformer": TINY.transformer.model_copy(update={"norm_eps": 1e-6})},
    ]
    hashes = {race_params_hash(TINY.model_copy(update=change)) for change in changes}
    assert len(hashes) == len(changes) and race_params_hash(TINY) not in hashes
    with pytest.raises(ValueError, match="unknown race preset 'huge'; choose one of default, tiny"):
        race_preset("huge")


@pytest.fixture(scope="module")
def tiny_client() -> TestClient:
    app = FastAPI()
    app.include_router(sprint_router(TINY, preset="tiny"))
    install_error_handlers(app)
    return TestClient(app)


def test_params_route(tiny_client: TestClient, client: TestClient) -> None:
    described = tiny_client.get("/v1/sprint/params").json()
    assert described == {
        "preset": "tiny",
        "params": TINY.model_dump(mode="json"),
        "params_hash": TINY_HASH,
        "r_target": r_target(64, 1 / 32),
        "samples": 145,
        "threshold": 11,
    }
    assert RaceParams.model_validate(described["params"]) == TINY
    unnamed = client.get("/v1/sprint/params").json()
    assert unnamed["preset"] is None and unnamed["params_hash"] == race_params_hash(TEST_PARAMS).hex()


@pytest.fixture(scope="module")
def tiny_run(tiny_client: TestClient) -> dict[str, Any]:
    ran = tiny_client.post("/v1/sprint/run", json=run_body(nonce_count=4096))
    assert ran.status_code == 200, ran.text
    return dict(ran.json())


def open_body(run: dict[str, Any], **overrides: object) -> dict[str, object]:
    return {"commitment": run["commitment"], "randomness": challenge(7).hex(), "proofs": run["proofs"], **overrides}


def test_run_open_verify_over_http(tiny_client: TestClient, tiny_run: dict[str, Any]) -> None:
    """The openings /open returns are what /verify samples: an honest node passes with 0 failures."""
    assert 60 < tiny_run["commitment"]["count"] == len(tiny_run["proofs"]) < 200
    opened = tiny_client.post("/v1/sprint/open", json=open_body(tiny_run))
    assert opened.status_code == 200, opened.text
    openings = opened.json()["openings"]
    count = tiny_run["commitment"]["count"]
    indices = sample_indices(bytes.fromhex(tiny_run["commitment"]["root"]), challenge(7), count, 145)
    assert [opening["index"] for opening in openings] == sorted(set(indices))
    verdict = tiny_client.post(
        "/v1/sprint/verify",
        json={"commitment": tiny_run["commitment"], "randomness": challenge(7).hex(), "openings": openings},
    )
    assert verdict.json() == {"fraud": False, "failures": 0, "samples": 145, "threshold": 11, "reason": ""}
    forged = [{**opening, "distance": opening["distance"] + 10**6} for opening in openings]
    caught = tiny_client.post(
        "/v1/sprint/verify",
        json={"commitment": tiny_run["commitment"], "randomness": challenge(7).hex(), "openings": forged},
    )
    assert caught.json()["fraud"] and caught.json()["failures"] == 145


def test_open_of_an_empty_commitment(client: TestClient) -> None:
    commitment = {"root": EMPTY_ROOT.hex(), "count": 0, "r_target": 1, "seed": SEED.hex(), "pubkey": PUBKEY.hex()}
    opened = client.post("/v1/sprint/open", json={"commitment": commitment, "randomness": "01", "proofs": []})
    assert opened.json() == {"openings": []}


def test_open_refuses_proofs_that_do_not_rebuild_the_commitment(
    tiny_client: TestClient, tiny_run: dict[str, Any]
) -> None:
    proofs = tiny_run["proofs"]
    altered = [{**proofs[0], "distance": proofs[0]["distance"] - 1}, *proofs[1:]]
    for wrong in (proofs[:-1], altered, proofs[::-1], [*proofs, proofs[-1]]):
        response = tiny_client.post("/v1/sprint/open", json=open_body(tiny_run, proofs=wrong))
        assert response.status_code == 400
        assert response.json()["error"] == {
            "message": "proofs do not rebuild the committed root and count",
            "type": "invalid_request_error",
            "param": "proofs",
            "code": None,
        }
    recounted = {**tiny_run["commitment"], "count": len(proofs) + 1}
    assert tiny_client.post("/v1/sprint/open", json=open_body(tiny_run, commitment=recounted)).status_code == 400


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"proofs": None}, "proofs"),
        ({"randomness": ""}, "randomness"),
        ({"randomness": "xyz"}, "randomness"),
        ({"proofs": [{"nonce": -1, "distance": 1}]}, "proofs[0].nonce"),
        ({"openings": []}, "openings"),
        ({"commitment": {"root": "00"}}, "commitment.root"),
    ],
)
def test_open_rejects_malformed_bodies(
    tiny_client: TestClient, tiny_run: dict[str, Any], change: dict[str, object], param: str
) -> None:
    body = {key: value for key, value in {**open_body(tiny_run), **change}.items() if value is not None}
    response = tiny_client.post("/v1/sprint/open", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["message"]
    garbage = tiny_client.post("/v1/sprint/open", content=b"{not json", headers={"content-type": "application/json"})
    assert garbage.status_code == 400 and garbage.json()["error"]["param"] is None
