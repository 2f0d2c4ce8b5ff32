"""x/poc in process: the selection (exact rates, a draw after the finish from its beacon, the validator drawn by
weight among the other hosts), the drawn validator's verdict (match, mismatch), a missed window, every refusal
of a verdict with its code and nothing changed, the queries, the genesis round trip and the invariants.

Two hosts (tests/test_inference.py's chain: HOST_A and HOST_B both serve MODEL), so an inference HOST_A finishes
is validated by HOST_B. The chain has no BLS certificates, so the draws use the fallback beacon; invariants are
checked after every block.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from test_inference import (
    AUTH,
    COLLATERAL,
    DENOM,
    HOST_A,
    HOST_B,
    MODEL,
    OTHER,
    OTHER_SHA,
    PARAMS,
    SHA,
    STRANGER,
    TA,
    addr,
    block,
    deliver,
    epoch,
    finish,
    get,
    id_of,
    locked,
    model,
    node,
    ok,
    raw,
    refused,
    reply_of,
    start,
    until_epoch,
)
from test_learning import events as tx_events
from test_stake import GNK, KEYS, host_chain
from test_stake import events as block_events

from gonkad import genesis
from host.poc.config import VOTE_GAS, VOTE_GAS_PER_VOTER
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.inference.v1 import tx_pb2 as inference_tx
from protogen.gonka.inference.v1.inference_pb2 import STATUS_INVALIDATED
from protogen.gonka.poc.v1 import poc_pb2, query_pb2, tx_pb2
from sdk.address import module_address
from sdk.crypto import bech32
from sdk.services import gonka
from x.poc import genesis as poc_genesis
from x.poc import invariants, keys, types
from x.poc.client import queries as poc_queries
from x.poc.client.queries import validate_message
from x.slashing import keys as slashing_keys

QUERY = gonka("poc").query
WINDOW = 10
ALWAYS = {"min_validation_rate": "1", "max_validation_rate": "1"}


def poc_params(**changes: Any) -> dict[str, Any]:
    return {
        "min_validation_rate": "0.5",
        "max_validation_rate": "1",
        "reputation_scale": "1",
        "draw_delay_blocks": "1",
        "validation_window_blocks": str(WINDOW),
        "retention_blocks": "50",
        "dispute_voters": "3",
        "dispute_window_blocks": str(WINDOW),
        "dispute_slash_fraction": "0.2",
        "invalid_after": "2",
        "sprt_p0": "0.001",
        "sprt_p1": "0.05",
        "sprt_alpha": "0.000001",
        **changes,
    }


def make_chain(path: Path, poc: dict[str, Any] | None = None, **params: Any) -> InProcessChain:
    """tests/test_inference.py's chain with x/poc's params (rate 1 unless given: every inference selected)."""
    section = {
        "params": PARAMS,
        "models": [model("tiny-llama", SHA), model("other/model-v2", OTHER_SHA, 5)],
        "nodes": [node(HOST_A, "node-a", [MODEL]), node(HOST_B, "node-b", [MODEL])],
    }
    state = {"inference": section, "poc": poc or {"params": poc_params(**(params or ALWAYS))}}
    return host_chain(path, COLLATERAL, extra=state, authority=raw(AUTH), check_invariants=True)


def finished(chain: InProcessChain, body: bytes = b'{"messages":[]}') -> tuple[bytes, int]:
    """Start and finish an inference by HOST_A; its id and finish height."""
    msg = start(chain, body=body)
    ok(deliver(chain, TA, msg)[0])
    ok(deliver(chain, HOST_A, finish(id_of(msg)))[0])
    return id_of(msg), chain.height


def validation(chain: InProcessChain, inference_id: bytes) -> poc_pb2.Validation:
    return poc_queries.validation(chain, inference_id)  # type: ignore[arg-type]


def host(chain: InProcessChain, key: Any) -> query_pb2.QueryHostResponse:
    return poc_queries.host(chain, addr(key))  # type: ignore[arg-type]


def assigned(chain: InProcessChain, key: Any) -> list[poc_pb2.Validation]:
    return poc_queries.assigned(chain, addr(key))  # type: ignore[arg-type]


def verdict(
    chain: InProcessChain, inference_id: bytes, key: Any = HOST_B, match: bool = True, score: int = 999_000
) -> Any:
    kind = poc_pb2.VERDICT_MATCH if match else poc_pb2.VERDICT_MISMATCH
    return deliver(chain, key, validate_message(addr(key), inference_id, kind, score))[0]


def poc_state(chain: InProcessChain) -> dict[str, Any]:
    return poc_genesis.export_genesis(chain.context(), chain.app.poc_keeper)


def binomial_bounds(n: int, p: Fraction, sigmas: int = 5) -> tuple[float, float]:
    mean, sd = n * float(p), math.sqrt(n * float(p) * (1 - float(p)))
    return mean - sigmas * sd, mean + sigmas * sd


# --- the selection math (types.py) ----------------------------------------------------------------------


def test_rate_falls_from_max_toward_min_exactly() -> None:
    low, high = Fraction(1, 100), Fraction(1, 10)
    assert types.compute_rate(low, high, 100, 0) == high
    assert types.compute_rate(low, high, 100, 100) == (low + high) / 2 == Fraction(11, 200)
    rates = [types.compute_rate(low, high, 100, r) for r in (0, 1, 10, 100, 1000, 10**6)]
    assert rates == sorted(rates, reverse=True) and all(low < r <= high for r in rates)
    assert types.rate_text(Fraction(11, 200)) == "11/200"


def test_selection_follows_the_rate_within_binomial_bounds() -> None:
    beacon = hashlib.sha256(b"beacon").digest()
    ids = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(20_000)]
    for rate in (Fraction(1, 100), Fraction(11, 200), Fraction(1, 10)):
        selected = sum(types.is_selected(beacon, i, rate) for i in ids)
        low, high = binomial_bounds(len(ids), rate)
        assert low < selected < high, (rate, selected)
    assert not any(types.is_selected(beacon, i, Fraction(0)) for i in ids[:1000])
    assert all(types.is_selected(beacon, i, Fraction(1)) for i in ids[:1000])
    other = hashlib.sha256(b"another beacon").digest()  # another beacon, another sample
    rate = Fraction(1, 10)
    assert [types.is_selected(beacon, i, rate) for i in ids] != [types.is_selected(other, i, rate) for i in ids]
    assert [types.is_selected(beacon, i, rate) for i in ids] == [types.is_selected(beacon, i, rate) for i in ids]


def test_validator_is_drawn_by_weight() -> None:
    beacon = hashlib.sha256(b"beacon").digest()
    weights = {b"\x01" * 20: 1, b"\x02" * 20: 2, b"\x03" * 20: 7, b"\x04" * 20: 0}
    draws = Counter(types.draw_validator(beacon, i.to_bytes(32, "big"), weights) for i in range(20_000))
    assert b"\x04" * 20 not in draws and None not in draws
    for address, weight in weights.items():
        if weight:
            low, high = binomial_bounds(20_000, Fraction(weight, 10))
            assert low < draws[address] < high, (address, draws[address])
    assert types.draw_validator(beacon, b"\x00" * 32, {}) is None
    assert types.draw_validator(beacon, b"\x00" * 32, {b"\x01" * 20: 0}) is None


# --- on chain -----------------------------------------------------------------------------------------------


def test_the_draw_comes_after_the_finish_and_a_match_grows_the_reputation(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", min_validation_rate="0.5", max_validation_rate="1") as chain:
        inference_id, finish_height = finished(chain)
        record = validation(chain, inference_id)
        assert record.status == poc_pb2.STATUS_PENDING and record.draw_height == finish_height + 1
        assert not record.validator and not record.beacon and not record.rate
        block(chain)  # the beacon height: its certificate comes with the next block
        assert validation(chain, inference_id).status == poc_pb2.STATUS_PENDING
        block(chain)
        record = validation(chain, inference_id)
        assert record.status == poc_pb2.STATUS_SELECTED and record.rate == "1/1"
        assert record.validator == addr(HOST_B) != record.executor == addr(HOST_A)  # never the executor
        assert record.deadline_height == chain.height + WINDOW
        assert record.beacon == chain.app.poc_keeper.get_beacon(chain.context(), record.draw_height)
        assert host(chain, HOST_A).rate == "1/1"
        assert [r.inference_id for r in assigned(chain, HOST_B)] == [inference_id]
        assert assigned(chain, HOST_A) == []

        result = verdict(chain, inference_id)
        ok(result)
        assert reply_of(result, tx_pb2.MsgValidateInferenceResponse).status == poc_pb2.STATUS_VALIDATED
        record = validation(chain, inference_id)
        assert (record.status, record.verdict, record.score) == (
            poc_pb2.STATUS_VALIDATED,
            poc_pb2.VERDICT_MATCH,
            999_000,
        )
        executor, validator = host(chain, HOST_A), host(chain, HOST_B)
        assert (executor.host.reputation, executor.host.validated, executor.host.disputed) == (1, 1, 0)
        assert executor.rate == "3/4"  # 1/2 + 1/2 · 1 / (1 + 1): the next inference is less likely drawn
        assert (validator.host.validations, validator.host.missed) == (1, 0)
        assert assigned(chain, HOST_B) == []
        assert executor.host.status == poc_pb2.HOST_STATUS_ACTIVE


def test_a_mismatch_opens_a_dispute_and_a_missed_window_counts(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        disputed, _ = finished(chain, b'{"n":1}')
        missed, _ = finished(chain, b'{"n":2}')
        block(chain)
        ok(verdict(chain, disputed, match=False, score=12_000))
        record = validation(chain, disputed)
        assert (record.status, record.verdict) == (poc_pb2.STATUS_DISPUTED, poc_pb2.VERDICT_MISMATCH)
        assert record.prune_height == 0  # a dispute stays until decided
        executor = host(chain, HOST_A).host
        assert (executor.reputation, executor.validated, executor.disputed) == (0, 0, 1)

        deadline = validation(chain, missed).deadline_height
        while chain.height < deadline:
            assert validation(chain, missed).status == poc_pb2.STATUS_SELECTED
            block(chain)
        assert validation(chain, missed).status == poc_pb2.STATUS_MISSED
        assert assigned(chain, HOST_B) == []
        assert (host(chain, HOST_B).host.missed, host(chain, HOST_B).host.validations) == (1, 1)
        refused(verdict(chain, missed), "poc", 7, "window")


def test_invalid_verdicts_are_refused_with_their_codes_and_change_nothing(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        pending, _ = finished(chain, b'{"n":1}')
        before = poc_state(chain)
        refused(verdict(chain, pending), "poc", 3, "drawn after")
        assert poc_state(chain) == before
        block(chain)
        selected = pending
        late, _ = finished(chain, b'{"n":2}')
        block(chain)
        unspecified = poc_pb2.VERDICT_UNSPECIFIED
        cases = [
            (verdict(chain, hashlib.sha256(b"nobody").digest()), 2, "no validation record"),
            (verdict(chain, selected, key=STRANGER), 5, addr(HOST_B)),
            (verdict(chain, selected, key=HOST_A), 5, "to validate"),  # the executor itself
            (verdict(chain, selected, score=1_000_001), 8, "1000001"),
            (deliver(chain, HOST_B, validate_message(addr(HOST_B), selected, unspecified, 1))[0], 9, ""),
            (verdict(chain, selected[:31]), 10, "31 bytes"),
        ]  # fmt: skip
        before = poc_state(chain)
        for result, code, words in cases:
            refused(result, "poc", code, words)
        assert poc_state(chain) == before
        ok(verdict(chain, selected))
        before = poc_state(chain)
        refused(verdict(chain, selected), "poc", 6, "VALIDATED")  # twice
        refused(verdict(chain, selected, match=False), "poc", 6, "VALIDATED")
        assert poc_state(chain) == before
        while chain.height <= validation(chain, late).deadline_height:
            block(chain)
        before = poc_state(chain)
        refused(verdict(chain, late), "poc", 7, "window closed")  # after the window
        assert poc_state(chain) == before

        params = chain.app.poc_keeper.get_params(chain.context())
        params.min_validation_rate = params.max_validation_rate = "0"
        never = tx_pb2.MsgUpdateParams(authority=addr(AUTH), params=params)
        ok(deliver(chain, AUTH, never)[0])
        unselected, _ = finished(chain, b'{"n":3}')
        block(chain)
        block(chain)
        assert validation(chain, unselected).status == poc_pb2.STATUS_NOT_SELECTED
        assert validation(chain, unselected).rate == "0/1"
        before = poc_state(chain)
        refused(verdict(chain, unselected), "poc", 4, "NOT_SELECTED")
        assert poc_state(chain) == before


def set_threshold(chain: InProcessChain, threshold: int) -> None:
    """The authority sets MODEL's verification threshold (parts per million)."""
    changed = inference_pb2.Model()
    changed.CopyFrom(chain.app.inference_keeper.get_model(chain.context(), MODEL))
    changed.verify_threshold = threshold
    ok(deliver(chain, AUTH, inference_tx.MsgRegisterModel(authority=addr(AUTH), model=changed))[0])


def test_a_match_must_score_the_models_threshold(tmp_path: Path) -> None:
    """A MATCH below the model's threshold (the default 800,000 ppm while it sets none, then its own) is refused
    with poc/11 and changes nothing; at exactly the threshold it is accepted; a MISMATCH stands at any score. A
    stranger's low MATCH is still only "not yours" (poc/5)."""
    with make_chain(tmp_path / "db") as chain:
        default, _ = finished(chain, b'{"n":1}')
        own, _ = finished(chain, b'{"n":2}')
        mismatched, _ = finished(chain, b'{"n":3}')
        block(chain)
        block(chain)  # every draw done
        before = poc_state(chain)
        refused(
            verdict(chain, default, score=799_999),
            "poc",
            11,
            f"scored 799999, below model {MODEL!r}'s threshold 800000",
        )
        refused(verdict(chain, default, key=STRANGER, score=1), "poc", 5, addr(HOST_B))
        assert poc_state(chain) == before
        ok(verdict(chain, default, score=800_000))
        assert validation(chain, default).status == poc_pb2.STATUS_VALIDATED

        set_threshold(chain, 999_999)
        before = poc_state(chain)
        refused(verdict(chain, own, score=999_998), "poc", 11, "scored 999998, below")
        refused(verdict(chain, own, score=800_000), "poc", 11, "threshold 999999")
        assert poc_state(chain) == before
        ok(verdict(chain, own, score=999_999))
        assert (validation(chain, own).status, validation(chain, own).score) == (poc_pb2.STATUS_VALIDATED, 999_999)
        ok(verdict(chain, mismatched, match=False, score=1_000_000))  # a wrong token fails an answer at any score
        assert validation(chain, mismatched).status == poc_pb2.STATUS_DISPUTED


def test_settled_records_are_pruned_and_a_dispute_with_no_one_to_vote_is_undecided(tmp_path: Path) -> None:
    """With two hosts a dispute has no voter to draw: UNDECIDED at its voters' draw (no one slashed), then pruned
    like any settled record; until that draw it is kept."""
    with make_chain(tmp_path / "db", **{**ALWAYS, "retention_blocks": "2"}) as chain:
        validated, _ = finished(chain, b'{"n":1}')
        disputed, _ = finished(chain, b'{"n":2}')
        block(chain)
        ok(verdict(chain, validated))
        ok(verdict(chain, disputed, match=False))
        assert validation(chain, disputed).status == poc_pb2.STATUS_DISPUTED
        block(chain)
        block(chain)
        record = validation(chain, disputed)
        assert (record.status, list(record.votes), record.slashed) == (poc_pb2.STATUS_UNDECIDED, [], "")
        assert host(chain, HOST_A).host.invalidated == 0
        block(chain)
        assert chain.app.poc_keeper.get_validation(chain.context(), validated) is None
        while chain.app.poc_keeper.get_validation(chain.context(), disputed) is not None:
            assert chain.height <= record.prune_height
            block(chain)
        request = query_pb2.QueryValidationRequest(inference_id=validated.hex())
        reply = chain.app.query(abci.RequestQuery(path=QUERY + "Validation", data=request.SerializeToString()))
        assert (reply.codespace, reply.code) == ("sdk", 38)


def test_genesis_export_import_round_trip(tmp_path: Path) -> None:
    with four_hosts(tmp_path / "a", dispute_window_blocks="40") as chain:  # still voting at the export
        voting, _, (small, _) = disputed(chain, b'{"n":1}')
        ok(verdict(chain, voting, key=small, match=False))
        validated, _ = finished(chain, b'{"n":2}')
        block(chain)
        block(chain)
        ok(verdict(chain, validated, key=BY_ADDRESS[validation(chain, validated).validator]))
        selected, _ = finished(chain, b'{"n":3}')
        block(chain)
        block(chain)
        drawing, _ = finished(chain, b'{"n":4}')
        block(chain)
        block(chain)
        still_pending, _ = finished(chain, b'{"n":5}')
        ok(verdict(chain, drawing, key=BY_ADDRESS[validation(chain, drawing).validator], match=False))
        exported = poc_state(chain)
    statuses = sorted(r["status"] for r in exported["validations"])
    assert statuses == ["STATUS_DISPUTED"] * 2 + ["STATUS_PENDING", "STATUS_SELECTED", "STATUS_VALIDATED"]
    with four_hosts(tmp_path / "b", poc=exported) as again:
        assert poc_state(again) == exported
        ctx = again.context()
        assert invariants.queues_consistent(again.app.poc_keeper, ctx) is None
        keeper = again.app.poc_keeper
        assert [i for _, i in keeper.queue(ctx, keys.DRAW_PREFIX)] == [still_pending]
        assert sorted(i for _, i in keeper.queue(ctx, keys.DEADLINE_PREFIX)) == sorted([selected, voting])
        assert [i for _, i in keeper.queue(ctx, keys.VOTE_DRAW_PREFIX)] == [drawing]


def test_invariants_name_broken_state(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        inference_id, _ = finished(chain)
        keeper = chain.app.poc_keeper
        ctx = chain.context()
        record = keeper.get_validation(ctx, inference_id)
        assert record is not None
        ctx.kv(keys.STORE_PREFIX).delete(keys.draw_key(record.draw_height, inference_id))
        assert "a record missing from its queue" in (invariants.queues_consistent(keeper, ctx) or "")
        ctx = chain.context()
        record.validator = record.executor
        ctx.kv(keys.STORE_PREFIX).set(keys.validation_key(inference_id), record.SerializeToString())
        assert "validated by its executor" in (invariants.validators_drawn(keeper, ctx) or "")
        ctx = chain.context()
        keeper.set_host(ctx, poc_pb2.HostRecord(host=addr(HOST_A), reputation=2, validated=1))
        assert "exceeds its validated count" in (invariants.validators_drawn(keeper, ctx) or "")
        ctx = chain.context()
        record.validator, record.status = addr(HOST_B), poc_pb2.STATUS_DISPUTED
        record.verdict = poc_pb2.VERDICT_MISMATCH
        record.votes.add(voter=addr(HOST_A), power=1)
        ctx.kv(keys.STORE_PREFIX).set(keys.validation_key(inference_id), record.SerializeToString())
        assert "include its executor or accuser" in (invariants.validators_drawn(keeper, ctx) or "")


def test_many_hosts_every_draw_is_reproducible_and_never_the_executor(tmp_path: Path) -> None:
    """Four hosts of different collateral serve MODEL, one serves OTHER alone: each of HOST_A's inferences is
    drawn, from its recorded beacon, exactly as any node recomputes it, by power among the three others; an
    inference of a model no other host serves has no validator."""
    hosts = KEYS[:4]
    section = {
        "params": PARAMS,
        "models": [model("tiny-llama", SHA), model("other/model-v2", OTHER_SHA, 5)],
        "nodes": [node(k, f"node-{i}", [MODEL, OTHER] if k is HOST_A else [MODEL]) for i, k in enumerate(hosts)],
    }
    state = {"inference": section, "poc": {"params": poc_params(**ALWAYS)}}
    collateral = [100 * GNK, 150 * GNK, 200 * GNK, 250 * GNK]
    with host_chain(tmp_path / "db", collateral, extra=state, authority=raw(AUTH), check_invariants=True) as chain:
        starts = [start(chain, body=f'{{"n":{n}}}'.encode()) for n in range(80)]
        lonely = start(chain, body=b'{"other":1}', model_id=OTHER, fee=5)
        ok(deliver(chain, TA, *starts, lonely)[0])
        ok(deliver(chain, HOST_A, *(finish(id_of(m)) for m in [*starts, lonely]))[0])
        block(chain)
        block(chain)
        ctx = chain.context()
        powers = chain.app.stake_keeper.validator_powers(ctx)
        candidates = {h: p for h, p in powers.items() if h != raw(HOST_A)}
        assert len(candidates) == 3
        drawn: Counter[str] = Counter()
        for m in starts:
            record = validation(chain, id_of(m))
            assert record.status == poc_pb2.STATUS_SELECTED and record.draw_height == record.finish_height + 1
            assert types.is_selected(record.beacon, record.inference_id, Fraction(record.rate))
            expected = types.draw_validator(record.beacon, record.inference_id, candidates)
            assert expected is not None and record.validator == bech32.encode(expected) != addr(HOST_A)
            drawn[record.validator] += 1
        total = sum(candidates.values())
        for address, power in candidates.items():
            low, high = binomial_bounds(len(starts), Fraction(power, total))
            assert low < drawn[bech32.encode(address)] < high
        assert validation(chain, id_of(lonely)).status == poc_pb2.STATUS_NO_VALIDATOR
        assert not validation(chain, id_of(lonely)).validator


def test_cli_commands_parse() -> None:
    from gonkad.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["tx", "poc", "validate", "ab" * 32, "mismatch", "12000", "--from", "val0"])
    assert (args.inference_id, args.verdict, args.score) == (bytes.fromhex("ab" * 32), "mismatch", 12000)
    for argv in (
        ["tx", "poc", "update-params", "p.json", "--from", "val0"],
        ["query", "poc", "params"],
        ["query", "poc", "validation", "00" * 32],
        ["query", "poc", "host", addr(HOST_A)],
        ["query", "poc", "assigned", addr(HOST_B)],
        ["query", "poc", "hosts", "HOST_STATUS_INVALID"],
    ):
        assert callable(parser.parse_args(argv).func), argv


def test_invalid_params_and_a_stranger_updating_them_are_refused(tmp_path: Path) -> None:
    from x.poc.params import default_params, validate_params

    validate_params(default_params())
    for change in ({"min_validation_rate": "0.2"}, {"max_validation_rate": "1.5"}, {"reputation_scale": 0},
                   {"draw_delay_blocks": 0}, {"validation_window_blocks": 0}):  # fmt: skip
        params = default_params()
        for name, value in change.items():
            setattr(params, name, value)
        with pytest.raises(ValueError):
            validate_params(params)
    with make_chain(tmp_path / "db") as chain:
        before = poc_state(chain)
        params = chain.app.poc_keeper.get_params(chain.context())
        params.max_validation_rate = "0.5"
        result = deliver(chain, STRANGER, tx_pb2.MsgUpdateParams(authority=addr(STRANGER), params=params))[0]
        assert result.code != 0 and poc_state(chain) == before


# --- disputes and standing ---------------------------------------------------------------------------------

HOSTS = KEYS[:4]
"""HOST_A, HOST_B, ALICE and BOB, hosts of different collateral all serving MODEL: a dispute over an answer of
HOST_A has an accuser and two voters."""
COLLATERALS = [100 * GNK, 150 * GNK, 200 * GNK, 250 * GNK]
BY_ADDRESS = {addr(k): k for k in HOSTS}
SLASHED_POOL = bech32.encode(module_address(slashing_keys.SLASHED_POOL))


def four_hosts(
    path: Path, poc: dict[str, Any] | None = None, rewards: dict[str, Any] | None = None, **params: Any
) -> InProcessChain:
    section = {
        "params": PARAMS,
        "models": [model("tiny-llama", SHA), model("other/model-v2", OTHER_SHA, 5)],
        "nodes": [node(k, f"node-{i}", [MODEL]) for i, k in enumerate(HOSTS)],
    }
    state = {"inference": section, "poc": poc or {"params": poc_params(**{**ALWAYS, **params})}}
    if rewards is not None:
        state["rewards"] = rewards
    return host_chain(path, COLLATERALS, extra=state, authority=raw(AUTH), check_invariants=True)


def disputed(chain: InProcessChain, body: bytes) -> tuple[bytes, Any, list[Any]]:
    """An answer of HOST_A that its drawn validator finds a mismatch, its voters drawn: (id, the accuser's key,
    the voters' keys, the least powerful first)."""
    inference_id, _ = finished(chain, body)
    block(chain)
    block(chain)
    accuser = BY_ADDRESS[validation(chain, inference_id).validator]
    ok(verdict(chain, inference_id, key=accuser, match=False, score=3_000))
    block(chain)  # the voters' beacon height
    block(chain)
    record = validation(chain, inference_id)
    window = chain.app.poc_keeper.get_params(chain.context()).dispute_window_blocks
    assert record.status == poc_pb2.STATUS_DISPUTED and record.vote_deadline_height == chain.height + window
    voters = sorted(record.votes, key=lambda v: (v.power, v.voter))
    assert {v.voter for v in voters} == {addr(k) for k in HOSTS} - {addr(HOST_A), record.validator}
    powers = chain.app.stake_keeper.validator_powers(chain.context())
    assert all(v.power == powers[bech32.decode(v.voter)] for v in voters)
    assert (record.accuser_power, record.executor_power) == (powers[raw(accuser)], powers[raw(HOST_A)])
    for v in voters:
        assert inference_id in [r.inference_id for r in assigned(chain, BY_ADDRESS[v.voter])]
    return inference_id, accuser, [BY_ADDRESS[v.voter] for v in voters]


def collateral(chain: InProcessChain, key: Any) -> int:
    found = chain.app.stake_keeper.get_host(chain.context(), raw(key))
    assert found is not None
    return int(found.collateral)


def check_payout(result: Any, loser: Any, taken: int, honest: list[tuple[str, int]]) -> None:
    """The slash event took ``taken`` from ``loser``; each honest (address, power) got its share by power, rounded
    down, from the slashed pool, and the rest went to the community pool."""
    [slash] = [e for e in tx_events(result, "slash") if e["operator"] == addr(loser)]
    assert slash["amount"] == f"{taken}{DENOM}"
    total = sum(power for _, power in honest)
    paid = {(e["recipient"], e["amount"]) for e in tx_events(result, "transfer") if e["sender"] == SLASHED_POOL}
    shares = [taken * power // total for _, power in honest]
    to_honest = {(address, amount) for address, amount in paid if address in dict(honest)}
    assert to_honest == {(address, f"{share}{DENOM}") for (address, _), share in zip(honest, shares) if share}
    rest = taken - sum(shares)
    assert slash["pool"] == f"{rest}{DENOM}" and {amount for _, amount in paid - to_honest} == {f"{rest}{DENOM}"}


def test_the_voters_uphold_a_mismatch_the_executor_is_invalidated_and_slashed(tmp_path: Path) -> None:
    with four_hosts(tmp_path / "db") as chain:
        inference_id, accuser, (small, large) = disputed(chain, b'{"n":1}')
        before = collateral(chain, HOST_A)
        paid = get(chain, inference_id)
        requester = bech32.decode(paid.requester)
        balances = (chain.balance(requester), chain.balance(raw(HOST_A)), locked(chain, HOST_A))
        clawed = min(paid.payment, balances[2])  # what of it still vests (the first of its two parts released)
        assert paid.payment > clawed > 0
        ok(verdict(chain, inference_id, key=small, match=False, score=1_000))
        assert validation(chain, inference_id).status == poc_pb2.STATUS_DISPUTED  # less than half the voters' power
        result = verdict(chain, inference_id, key=large, match=False, score=2_000)
        ok(result)
        assert reply_of(result, tx_pb2.MsgValidateInferenceResponse).status == poc_pb2.STATUS_INVALIDATED
        record = validation(chain, inference_id)
        assert result.gas_used <= VOTE_GAS + VOTE_GAS_PER_VOTER * len(record.votes)  # what a host's vote carries
        taken = before // 5
        assert (record.status, record.slashed, record.decided_height) == (
            poc_pb2.STATUS_INVALIDATED,
            str(taken),
            chain.height,
        )
        assert collateral(chain, HOST_A) == before - taken
        honest = [(addr(accuser), record.accuser_power)] + [(v.voter, v.power) for v in record.votes]
        check_payout(result, HOST_A, taken, honest)
        # the requester refunded the payment in full: what still vests taken back from the executor's schedule,
        # the part already released from what it may spend
        assert record.refunded == paid.payment and get(chain, inference_id).status == STATUS_INVALIDATED
        [refund] = tx_events(result, "invalidate_inference")
        assert (refund["refund"], refund["clawed_back"], refund["shortfall"]) == (
            f"{paid.payment}{DENOM}",
            f"{clawed}{DENOM}",
            f"0{DENOM}",
        )
        transfers = tx_events(result, "transfer")
        share = sum(  # the requester (ALICE) is also a host, perhaps one of the voters paid from the slash
            int(e["amount"].removesuffix(DENOM))
            for e in transfers
            if (e["sender"], e["recipient"]) == (SLASHED_POOL, paid.requester)
        )
        assert chain.balance(requester) == balances[0] + paid.payment + share
        assert chain.balance(raw(HOST_A)) == balances[1] - paid.payment
        assert locked(chain, HOST_A) == balances[2] - clawed
        executor = host(chain, HOST_A).host
        assert (executor.invalidated, executor.reputation, executor.consecutive_invalidations) == (1, 0, 1)
        assert executor.status == poc_pb2.HOST_STATUS_ACTIVE  # invalid_after is 2
        assert [host(chain, k).host.votes for k in (small, large)] == [1, 1]
        assert all(assigned(chain, k) == [] for k in HOSTS)


def test_the_voters_reject_a_false_accusation_and_the_accuser_is_slashed(tmp_path: Path) -> None:
    with four_hosts(tmp_path / "db") as chain:
        inference_id, accuser, (small, large) = disputed(chain, b'{"n":1}')
        before, executor_before = collateral(chain, accuser), collateral(chain, HOST_A)
        ok(verdict(chain, inference_id, key=small, match=True, score=990_000))
        result = verdict(chain, inference_id, key=large, match=True, score=995_000)
        ok(result)
        record = validation(chain, inference_id)
        taken = before // 5
        assert (record.status, record.slashed) == (poc_pb2.STATUS_CLEARED, str(taken))
        assert collateral(chain, accuser) == before - taken and collateral(chain, HOST_A) == executor_before
        honest = [(addr(HOST_A), record.executor_power)] + [(v.voter, v.power) for v in record.votes]
        check_payout(result, accuser, taken, honest)
        executor = host(chain, HOST_A).host
        assert (executor.validated, executor.reputation, executor.invalidated) == (1, 1, 0)
        assert host(chain, accuser).host.accusations_lost == 1


def test_votes_are_refused_with_their_codes_and_a_dispute_closes_undecided(tmp_path: Path) -> None:
    with four_hosts(tmp_path / "db") as chain:
        inference_id, _ = finished(chain, b'{"n":1}')
        block(chain)
        block(chain)
        accuser = BY_ADDRESS[validation(chain, inference_id).validator]
        ok(verdict(chain, inference_id, key=accuser, match=False))
        others = [k for k in HOSTS if k not in (HOST_A, accuser)]
        before = poc_state(chain)
        refused(verdict(chain, inference_id, key=others[0]), "poc", 3, "voters are drawn after")
        assert poc_state(chain) == before
        block(chain)
        record = validation(chain, inference_id)
        small, large = (BY_ADDRESS[v.voter] for v in sorted(record.votes, key=lambda v: (v.power, v.voter)))
        before = poc_state(chain)
        refused(verdict(chain, inference_id, key=HOST_A), "poc", 5, "not a drawn voter")
        refused(verdict(chain, inference_id, key=STRANGER), "poc", 5, "not a drawn voter")
        refused(verdict(chain, inference_id, key=accuser, match=True), "poc", 6, "own verdict")
        assert poc_state(chain) == before
        ok(verdict(chain, inference_id, key=small, match=False))
        before = poc_state(chain)
        refused(verdict(chain, inference_id, key=small, match=True), "poc", 6, "has voted")  # twice
        assert poc_state(chain) == before
        collaterals = [collateral(chain, k) for k in HOSTS]
        while chain.height < record.vote_deadline_height:
            assert validation(chain, inference_id).status == poc_pb2.STATUS_DISPUTED
            block(chain)
        record = validation(chain, inference_id)
        assert (record.status, record.slashed) == (poc_pb2.STATUS_UNDECIDED, "")  # one vote settles nothing
        assert [collateral(chain, k) for k in HOSTS] == collaterals
        assert (host(chain, large).host.missed, host(chain, small).host.missed) == (1, 0)
        before = poc_state(chain)
        refused(verdict(chain, inference_id, key=large), "poc", 7, "closed")  # after the close
        assert poc_state(chain) == before


def test_a_vote_to_match_must_score_the_models_threshold(tmp_path: Path) -> None:
    """A drawn voter's MATCH below the model's threshold is refused with poc/11 and changes nothing (the vote is
    still awaited); at exactly the threshold it counts."""
    with four_hosts(tmp_path / "db") as chain:
        inference_id, _, (small, large) = disputed(chain, b'{"n":1}')
        set_threshold(chain, 950_000)
        before = poc_state(chain)
        refused(verdict(chain, inference_id, key=small, score=949_999), "poc", 11, "threshold 950000")
        assert poc_state(chain) == before
        assert inference_id in [r.inference_id for r in assigned(chain, small)]
        ok(verdict(chain, inference_id, key=small, score=950_000))
        ok(verdict(chain, inference_id, key=large, match=False, score=999_000))  # a MISMATCH at any score
        [ballot] = [v for v in validation(chain, inference_id).votes if v.voter == addr(small)]
        assert (ballot.verdict, ballot.score) == (poc_pb2.VERDICT_MATCH, 950_000)


def test_invalidations_in_a_row_make_a_host_invalid_until_a_clean_epoch(tmp_path: Path) -> None:
    with four_hosts(tmp_path / "db") as chain:
        for n in range(2):
            inference_id, _, voters = disputed(chain, f'{{"n":{n}}}'.encode())
            for voter in voters:
                if validation(chain, inference_id).status == poc_pb2.STATUS_DISPUTED:
                    ok(verdict(chain, inference_id, key=voter, match=False))
            assert validation(chain, inference_id).status == poc_pb2.STATUS_INVALIDATED
        executor = host(chain, HOST_A).host
        assert (executor.status, executor.consecutive_invalidations) == (poc_pb2.HOST_STATUS_INVALID, 2)
        assert executor.invalid_epoch == epoch(chain)
        until_epoch(chain, executor.invalid_epoch + 1)
        assert host(chain, HOST_A).host.status == poc_pb2.HOST_STATUS_INVALID  # the epoch it fell in is not clean
        until_epoch(chain, executor.invalid_epoch + 2)
        executor = host(chain, HOST_A).host
        assert (executor.status, executor.consecutive_invalidations) == (poc_pb2.HOST_STATUS_ACTIVE, 0)


def test_an_invalid_host_earns_nothing_for_the_epoch_and_the_tas_leave_it_out(tmp_path: Path) -> None:
    """HOST_A made INVALID by two lost disputes, then finishing one more answer: at that epoch's end x/rewards
    vests the others' shares and sends HOST_A's to the community pool (``withheld``); x/poc's Hosts query lists it
    for the TAs."""
    rewards = genesis.default_app_state()["rewards"]
    rewards["params"]["initial_epoch_reward"] = str(1_000 * GNK)
    with four_hosts(tmp_path / "db", rewards=rewards) as chain:
        for n in range(2):
            inference_id, _, voters = disputed(chain, f'{{"n":{n}}}'.encode())
            for voter in voters:
                if validation(chain, inference_id).status == poc_pb2.STATUS_DISPUTED:
                    ok(verdict(chain, inference_id, key=voter, match=False))
        invalid_epoch = host(chain, HOST_A).host.invalid_epoch
        assert host(chain, HOST_A).host.status == poc_pb2.HOST_STATUS_INVALID
        listed = poc_queries.hosts(chain, poc_pb2.HOST_STATUS_INVALID)  # type: ignore[arg-type]
        assert [h.host for h in listed] == [addr(HOST_A)]
        worked, _ = finished(chain, b'{"n":"after"}')  # the chain still takes its work; the epoch pays it nothing
        worked_epoch = get(chain, worked).epoch
        assert invalid_epoch <= worked_epoch <= invalid_epoch + 1  # INVALID until a whole clean epoch passed
        while True:
            response = block(chain)
            paid = [e for e in block_events(response, "rewards") if e["epoch"] == str(worked_epoch)]
            if paid:
                break
        [paid_event] = paid
        vested = {e["recipient"] for e in block_events(response, "vest")}
        assert paid_event["withheld"] == addr(HOST_A) and addr(HOST_A) not in vested
        assert vested and vested <= {addr(k) for k in HOSTS[1:]}


def test_the_sequential_test_tells_a_cheating_rate_from_the_honest_one() -> None:
    p0, p1, alpha = Fraction(1, 1000), Fraction(5, 100), Fraction(1, 10**6)
    assert not types.sprt_invalid(p0, p1, alpha, 0, 0)
    assert not types.sprt_invalid(p0, p1, alpha, 3, 0)  # 50³ = 125,000 < 10⁶
    assert types.sprt_invalid(p0, p1, alpha, 4, 0)  # 50⁴ = 6,250,000 ≥ 10⁶
    assert not types.sprt_invalid(p0, p1, alpha, 4, 37)  # (950/999)^37 · 50⁴ < 10⁶
    assert types.sprt_invalid(p0, p1, alpha, 4, 36)
    assert not types.sprt_invalid(p0, p1, alpha, 1, 0) and not types.sprt_invalid(p0, p1, alpha, 10, 10_000)
