"""x/epochs: where a height falls in an epoch (schedule.py, pure functions) and the epoch moving on block by
block in an in-process chain (the CurrentEpoch query, the epoch_start / epoch_stage events, and a params
change that takes effect only from the next epoch).

The expected heights are written out by hand from the schedule's definition, not computed with schedule.py,
so a bug there cannot hide behind the same bug in the expectation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from gonkad import genesis
from protogen.gonka.epochs.v1 import epochs_pb2, query_pb2, tx_pb2
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, secp256k1
from x.epochs import schedule
from x.epochs.params import default_params, validate_params

CHAIN = "gonka-epochs"
AUTHORITY = secp256k1.PrivateKey(b"\x41" * 32)
RACE, RACE_VALIDATION = epochs_pb2.STAGE_RACE, epochs_pb2.STAGE_RACE_VALIDATION
SET_VALIDATORS, INFERENCE = epochs_pb2.STAGE_SET_VALIDATORS, epochs_pb2.STAGE_INFERENCE
SHORT = {"epoch_length": "6", "race_validation_offset": "1", "set_validators_offset": "2", "inference_offset": "3"}


def params(length: int = 6, rv: int = 1, sv: int = 2, inf: int = 3) -> epochs_pb2.Params:
    return epochs_pb2.Params(
        epoch_length=length, race_validation_offset=rv, set_validators_offset=sv, inference_offset=inf
    )


# --- schedule.py ------------------------------------------------------------------------------------------


def test_epoch_zero_is_all_inference_without_a_race() -> None:
    """The genesis epoch has no race: every block is inference, no stage starts inside it, and the next
    stage is the race at epoch 1's first block."""
    epoch = epochs_pb2.Epoch(number=0, start_height=1, params=params(length=10, rv=2, sv=4, inf=5))
    assert schedule.next_epoch_height(epoch) == 11
    for height in range(1, 11):
        assert schedule.stage_at(epoch, height) == INFERENCE
        assert schedule.stage_starting_at(epoch, height) is None
        assert schedule.next_stage(epoch, height) == (RACE, 11)
    assert schedule.next_stage(epoch, 0) == (RACE, 11)  # before the first block (a query at height 0)


def test_later_epochs_have_each_stage_at_its_offset() -> None:
    """Epoch 3 from height 101, length 10, offsets 2/4/5: race 101-102, validation 103-104, set validators 105,
    inference 106-110; epoch 4 at 111."""
    epoch = epochs_pb2.Epoch(number=3, start_height=101, params=params(length=10, rv=2, sv=4, inf=5))
    expected_stage = {
        101: RACE,
        102: RACE,
        103: RACE_VALIDATION,
        104: RACE_VALIDATION,
        105: SET_VALIDATORS,
        106: INFERENCE,
        107: INFERENCE,
        108: INFERENCE,
        109: INFERENCE,
        110: INFERENCE,
    }
    starting = {101: RACE, 103: RACE_VALIDATION, 105: SET_VALIDATORS, 106: INFERENCE}
    following = {
        101: (RACE_VALIDATION, 103),
        102: (RACE_VALIDATION, 103),
        103: (SET_VALIDATORS, 105),
        104: (SET_VALIDATORS, 105),
        105: (INFERENCE, 106),
        **{h: (RACE, 111) for h in range(106, 111)},
    }
    assert schedule.next_epoch_height(epoch) == 111
    assert {h: schedule.stage_at(epoch, h) for h in range(101, 111)} == expected_stage
    assert {h: schedule.stage_starting_at(epoch, h) for h in range(101, 111)} == {
        h: starting.get(h) for h in range(101, 111)
    }
    assert {h: schedule.next_stage(epoch, h) for h in range(101, 111)} == following


def test_one_block_stages() -> None:
    """The tightest schedule (each stage one block, inference the last): still every stage in turn."""
    epoch = epochs_pb2.Epoch(number=1, start_height=5, params=params(length=4, rv=1, sv=2, inf=3))
    assert [schedule.stage_at(epoch, h) for h in range(5, 9)] == [RACE, RACE_VALIDATION, SET_VALIDATORS, INFERENCE]
    assert [schedule.stage_starting_at(epoch, h) for h in range(5, 9)] == [
        RACE,
        RACE_VALIDATION,
        SET_VALIDATORS,
        INFERENCE,
    ]
    assert schedule.next_stage(epoch, 8) == (RACE, 9)


def test_default_params_are_valid_and_a_day_long() -> None:
    validate_params(default_params())
    assert default_params().epoch_length == 17_280


@pytest.mark.parametrize(
    "bad",
    [
        params(rv=0),
        params(rv=2, sv=2),
        params(rv=3, sv=2),
        params(sv=3, inf=3),
        params(sv=4, inf=3),
        params(length=3, inf=3),
        params(length=2, inf=3),
        params(length=0, rv=0, sv=0, inf=0),
    ],
    ids=[
        "race-validation-at-0",
        "equal-rv-sv",
        "rv-after-sv",
        "equal-sv-inf",
        "sv-after-inf",
        "inference-at-length",
        "inference-past-length",
        "all-zero",
    ],
)
def test_validate_params_refuses_out_of_order_offsets(bad: epochs_pb2.Params) -> None:
    with pytest.raises(ValueError, match="race_validation_offset < set_validators_offset < inference_offset"):
        validate_params(bad)


# --- in process -------------------------------------------------------------------------------------------


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    state_chain = InProcessChain(
        tmp_path / "db",
        {address_of(AUTHORITY): [("ngonka", 10**12)]},
        chain_id=CHAIN,
        app_state=_state(),
        authority=bech32.decode(address_of(AUTHORITY)),
    )
    with state_chain:
        yield state_chain


def _state() -> dict[str, Any]:
    state = genesis.default_app_state()
    state["epochs"] = {"params": dict(SHORT)}
    return state


def current(chain: InProcessChain) -> query_pb2.QueryCurrentEpochResponse:
    return chain.query(
        "/gonka.epochs.v1.Query/CurrentEpoch", query_pb2.QueryCurrentEpochRequest(), query_pb2.QueryCurrentEpochResponse
    )


def expected_at(height: int) -> tuple[int, int, int, int, int, int]:
    """(number, start_height, stage, next_stage, next_stage_height, next_epoch_height) after ``height`` is
    committed, for length 6 and offsets 1/2/3: epoch 0 is heights 1-6, epoch n ≥ 1 starts at 6n + 1."""
    if height <= 6:
        return 0, 1, INFERENCE, RACE, 7, 7
    number = (height - 1) // 6
    start = 6 * number + 1
    offset = height - start
    end = start + 6
    stage, following = {
        0: (RACE, (RACE_VALIDATION, start + 1)),
        1: (RACE_VALIDATION, (SET_VALIDATORS, start + 2)),
        2: (SET_VALIDATORS, (INFERENCE, start + 3)),
    }.get(offset, (INFERENCE, (RACE, end)))
    return number, start, stage, following[0], following[1], end


def summary(reply: query_pb2.QueryCurrentEpochResponse) -> tuple[int, int, int, int, int, int]:
    return (
        reply.epoch.number,
        reply.epoch.start_height,
        reply.stage,
        reply.next_stage,
        reply.next_stage_height,
        reply.next_epoch_height,
    )


def epoch_events(response: abci.ResponseFinalizeBlock) -> list[tuple[str, dict[str, str]]]:
    return [
        (e.type, {a.key: a.value for a in e.attributes})
        for e in response.events
        if e.type in ("epoch_start", "epoch_stage")
    ]


def test_current_epoch_and_events_follow_the_blocks(chain: InProcessChain) -> None:
    """Three epochs and more, block by block: the query answers the committed block's epoch and stage, and
    each epoch start and stage start is announced exactly once, at its first block."""
    assert chain.height == 1
    assert current(chain).height == 1 and summary(current(chain)) == expected_at(1)
    names = epochs_pb2.Stage.Name
    for height in range(2, 26):
        response = chain.block()
        reply = current(chain)
        assert reply.height == height
        assert summary(reply) == expected_at(height), height
        assert reply.epoch.params == params()
        events = []
        if height >= 7 and (height - 1) % 6 == 0:
            events.append(("epoch_start", {"epoch": str((height - 1) // 6), "height": str(height)}))
        if height >= 7 and (height - 1) % 6 in (0, 1, 2, 3):
            stage = {0: RACE, 1: RACE_VALIDATION, 2: SET_VALIDATORS, 3: INFERENCE}[(height - 1) % 6]
            events.append(("epoch_stage", {"epoch": str((height - 1) // 6), "stage": names(stage)}))
        assert epoch_events(response) == events, height


def deliver(chain: InProcessChain, msg: tx_pb2.MsgUpdateParams) -> abci.ExecTxResult:
    account = chain.account(address_of(AUTHORITY))
    assert account is not None
    raw = sign_tx(AUTHORITY, [msg], CHAIN, account.account_number, account.sequence, gas_limit=1_000_000)
    return chain.block([raw]).tx_results[0]


def test_a_new_epoch_length_takes_effect_from_the_next_epoch(chain: InProcessChain) -> None:
    """Changed at height 8 (epoch 1, which started at 7 with length 6): epoch 1 still ends after 12; epoch 2
    starts at 13 with length 4, epoch 3 at 17, epoch 4 at 21."""
    for _ in range(2, 8):
        chain.block()
    assert chain.height == 7
    result = deliver(chain, tx_pb2.MsgUpdateParams(authority=address_of(AUTHORITY), params=params(length=4)))
    assert result.code == 0, result.log
    assert chain.query(
        "/gonka.epochs.v1.Query/Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse
    ).params == params(length=4)
    reply = current(chain)
    assert (reply.height, reply.epoch.number, reply.epoch.params, reply.next_epoch_height) == (8, 1, params(), 13)
    starts: dict[int, int] = {}
    for _ in range(9, 22):
        response = chain.block()
        for kind, attributes in epoch_events(response):
            if kind == "epoch_start":
                starts[int(attributes["epoch"])] = int(attributes["height"])
        reply = current(chain)
        if chain.height == 12:
            assert (reply.epoch.number, reply.stage, reply.next_epoch_height) == (1, INFERENCE, 13)
        if chain.height == 13:
            assert (reply.epoch.number, reply.epoch.start_height, reply.epoch.params) == (2, 13, params(length=4))
            assert (reply.stage, reply.next_stage, reply.next_stage_height, reply.next_epoch_height) == (
                RACE,
                RACE_VALIDATION,
                14,
                17,
            )
        if chain.height == 16:
            assert (reply.epoch.number, reply.stage, reply.next_stage, reply.next_stage_height) == (
                2,
                INFERENCE,
                RACE,
                17,
            )
    assert starts == {2: 13, 3: 17, 4: 21}


def test_invalid_epoch_params_are_refused_and_change_nothing(chain: InProcessChain) -> None:
    """Even from the authority, a schedule whose inference would start past the epoch's end is sdk/18."""
    before = dict(chain.app.store.iterate(b"epochs/"))
    result = deliver(chain, tx_pb2.MsgUpdateParams(authority=address_of(AUTHORITY), params=params(length=3)))
    assert (result.codespace, result.code) == ("sdk", 18), result.log
    assert "invalid params" in result.log and "inference_offset < epoch_length" in result.log
    assert dict(chain.app.store.iterate(b"epochs/")) == before
