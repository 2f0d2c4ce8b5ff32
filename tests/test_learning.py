"""x/learning on an in-process app: each message rule's code and log, queries, genesis round trips, CLI input.

W1, W2, V1 and V2 are hosts (gentx) of different collateral; with ``verifiers_per_checkpoint`` 3 every other host
is drawn to replay each checkpoint, so the verifiers here are known in advance (tests/test_learning_pay.py draws
fewer and covers the money)."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf import json_format
from google.protobuf.message import Message

from gonkad import cli, genesis
from protogen.gonka.learning.v1 import learning_pb2, query_pb2, tx_pb2
from protogen.gonka.learning.v1.genesis_pb2 import GenesisState
from sdk.address import module_address
from sdk.cli.flags import message_dict
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, secp256k1
from sdk.services import gonka
from x.genutil.gentx import build_gentx
from x.learning import genesis as learning_genesis
from x.learning import keys
from x.learning.client import plain
from x.learning.module import LearningModule

QUERY = gonka("learning").query

CHAIN = "gonka-learning"
CREATOR, W1, W2, OUTSIDER, V1, V2 = (secp256k1.PrivateKey(bytes([0x60 + i]) * 32) for i in range(6))
KEYS = (CREATOR, W1, W2, OUTSIDER, V1, V2)
HOSTS = {W1: 100, W2: 150, V1: 200, V2: 250}
"""The hosts and their collateral in GNK."""
GNK = 10**9
FUNDS = 10**12
SHARE = 1000
BUDGET = SHARE * 2 * 2 + 3
"""Run 1's budget: 2 workers, 2 rounds, a share of 1000 each, and a remainder of 3."""
PARAMS = {
    "max_workers": 3,
    "max_rounds": 5,
    "max_reason_len": 16,
    "verifiers_per_checkpoint": 3,
    "replay_rate_ppm": 1_000_000,
    "verdict_window": 20,
    "learning_slash_fraction": "0.2",
    "payment_vesting_epochs": 1,
    "denom": "ngonka",
}


def h(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


CONFIG, INIT, FORGED = h("config"), h("initial weights"), h("forged")


def addr(key: secp256k1.PrivateKey) -> str:
    return address_of(key)


def module_account() -> str:
    return bech32.encode(module_address(keys.LEARNING_ACCOUNT))


class LearningChain(InProcessChain):
    """An in-process chain with every key funded and ``HOSTS`` registered, driven one signed transaction per
    block; reward issuance off, so balances and supply move only as the tests move them."""

    def __init__(self, path: Path, learning: dict[str, Any] | None = None, escrow: int = 0, **options: Any) -> None:
        """``learning``: the module's genesis (default: the default one with the test ``PARAMS``); ``escrow``: the
        module account's balance at genesis (an imported genesis's runs' escrow)."""
        state = genesis.default_app_state()
        state["learning"] = learning or {**state["learning"], "params": PARAMS}
        state["rewards"]["params"]["initial_epoch_reward"] = "0"
        gentxs = [
            build_gentx(key, f"host{i}", bytes([0xD0 + i]) * 32, ("ngonka", collateral * GNK), CHAIN)
            for i, (key, collateral) in enumerate(HOSTS.items())
        ]
        state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
        accounts = {addr(key): [("ngonka", FUNDS)] for key in KEYS}
        if escrow:
            accounts[module_account()] = [("ngonka", escrow)]
        super().__init__(path, accounts, chain_id=CHAIN, app_state=state, **options)

    def deliver(self, key: secp256k1.PrivateKey, msg: Message) -> abci.ExecTxResult:
        [result] = self.block([self.sign(key, msg)]).tx_results
        return result

    def sign(self, key: secp256k1.PrivateKey, msg: Message) -> bytes:
        reply = self.query(
            "/cosmos.auth.v1beta1.Query/Account",
            auth_query.QueryAccountRequest(address=addr(key)),
            auth_query.QueryAccountResponse,
        )
        account = auth_pb2.BaseAccount()
        reply.account.Unpack(account)
        return sign_tx(key, [msg], CHAIN, account.account_number, account.sequence, gas_limit=1_000_000)

    def ok(self, key: secp256k1.PrivateKey, msg: Message) -> abci.ExecTxResult:
        result = self.deliver(key, msg)
        assert result.code == 0, result.log
        return result

    def learning_state(self) -> dict[bytes, bytes]:
        return dict(self.app.store.iterate(keys.STORE_PREFIX))


def create_run(workers: list[str] | None = None, **overrides: Any) -> tx_pb2.MsgCreateTrainingRun:
    fields: dict[str, Any] = dict(
        creator=addr(CREATOR),
        config_hash=CONFIG,
        inner_steps=10,
        rounds=2,
        preset="tiny",
        initial_weights_hash=INIT,
        workers=[addr(W1), addr(W2)] if workers is None else workers,
        budget=str(BUDGET),
    )
    return tx_pb2.MsgCreateTrainingRun(**{**fields, **overrides})


def commit(
    worker: secp256k1.PrivateKey, run_id: int = 1, round_: int = 0, **overrides: Any
) -> tx_pb2.MsgCommitCheckpoint:
    """The honest checkpoint of ``worker`` for a round: it starts from the previous round's global weights."""
    fields = dict(
        start_weights_hash=INIT if round_ == 0 else h(f"global {round_ - 1}"),
        weights_hash=h(f"weights {round_} {addr(worker)}"),
        optimizer_hash=h(f"optimizer {round_} {addr(worker)}"),
        data_order_hash=h(f"data {round_} {addr(worker)}"),
        config_hash=CONFIG,
        global_weights_hash=h(f"global {round_}"),
        outer_momentum_hash=h(f"momentum {round_}"),
    )
    return tx_pb2.MsgCommitCheckpoint(worker=addr(worker), run_id=run_id, round=round_, **{**fields, **overrides})


def verdict(
    verifier: secp256k1.PrivateKey,
    worker: secp256k1.PrivateKey,
    valid: bool = True,
    round_: int = 0,
    run_id: int = 1,
    **overrides: Any,
) -> tx_pb2.MsgSubmitVerdict:
    fields: dict[str, Any] = dict(
        replay_weights_hash=h("replayed weights"),
        replay_optimizer_hash=h("replayed opt"),
        reason="" if valid else "weights differ",
    )
    return tx_pb2.MsgSubmitVerdict(
        verifier=addr(verifier),
        run_id=run_id,
        round=round_,
        worker=addr(worker),
        valid=valid,
        **{**fields, **overrides},
    )


def events(result: abci.ExecTxResult, event_type: str) -> list[dict[str, str]]:
    return [{a.key: a.value for a in e.attributes} for e in result.events if e.type == event_type]


def attributes(result: abci.ExecTxResult, event_type: str) -> dict[str, str]:
    [event] = events(result, event_type)
    return event


@pytest.fixture
def chain(tmp_path: Path) -> LearningChain:
    """Run 1 (W1, W2; 2 rounds) with W1's round-0 checkpoint; run 2 (W1; 3 rounds) with none."""
    chain = LearningChain(tmp_path / "db")
    chain.ok(CREATOR, create_run())
    chain.ok(CREATOR, create_run([addr(W1)], rounds=3))
    chain.ok(W1, commit(W1))
    return chain


def test_runs_get_sequential_ids_and_events(chain: LearningChain) -> None:
    result = chain.ok(CREATOR, create_run(preset="small"))
    assert attributes(result, "create_run") == {
        "run_id": "3",
        "creator": addr(CREATOR),
        "workers": f"{addr(W1)},{addr(W2)}",
        "rounds": "2",
        "config_hash": CONFIG.hex(),
        "budget": f"{BUDGET}ngonka",
    }
    assert events(result, "message") == [
        {"action": "/gonka.learning.v1.MsgCreateTrainingRun"},
        {"module": "learning", "sender": addr(CREATOR)},
    ]
    run = chain.query(QUERY + "Run", query_pb2.QueryRunRequest(run_id=3), query_pb2.QueryRunResponse).run
    assert plain(run) == {
        "id": 3,
        "creator": addr(CREATOR),
        "config_hash": CONFIG.hex(),
        "workers": [addr(W1), addr(W2)],
        "inner_steps": 10,
        "rounds": 2,
        "preset": "small",
        "initial_weights_hash": INIT.hex(),
        "created_height": chain.height,
        "budget": str(BUDGET),
        "paid": "0",
        "refunded": "0",
        "status": learning_pb2.RUN_STATUS_ACTIVE,
        "finished_height": 0,
        "denom": "ngonka",
    }
    assert chain.balance(module_account()) == 3 * BUDGET


def bech32_error(text: str) -> str:
    with pytest.raises(ValueError) as error:
        bech32.decode(text)
    return str(error.value)


BAD_ADDRESS = addr(W1)[:-1] + "q"
# case -> (message, codespace, code, log, stateless); a stateless failure leaves even the fee and sequence untouched.
CREATE_RULES = {
    "no-workers": (create_run([]), "learning", 3, "a run needs at least one worker: invalid training run", True),
    "duplicate-workers": (
        create_run([addr(W1), addr(W1)]),
        "learning",
        3,
        "workers must be distinct: invalid training run",
        True,
    ),
    "zero-rounds": (
        create_run(rounds=0),
        "learning",
        3,
        "inner_steps and rounds must be positive: invalid training run",
        True,
    ),
    "long-preset": (
        create_run(preset="p" * 65),
        "learning",
        3,
        "preset is longer than 64 bytes: invalid training run",
        True,
    ),
    "short-config-hash": (
        create_run(config_hash=b"\x01" * 31),
        "learning",
        2,
        "config_hash is 31 bytes: hash must be 32 bytes",
        True,
    ),
    "bad-worker-address": (
        create_run([BAD_ADDRESS]),
        "sdk",
        7,
        f"worker: {bech32_error(BAD_ADDRESS)}: invalid address",
        True,
    ),
    "too-many-workers": (
        create_run([addr(k) for k in (W1, W2, V1, V2)]),
        "learning",
        4,
        "4 workers, at most 3: training run exceeds the module params",
        False,
    ),
    "too-many-rounds": (
        create_run(rounds=6),
        "learning",
        4,
        "6 rounds, at most 5: training run exceeds the module params",
        False,
    ),
}


def assert_refused(
    chain: LearningChain,
    signer: secp256k1.PrivateKey,
    msg: Message,
    codespace: str,
    code: int,
    log: str,
    stateless: bool,
) -> None:
    """Refused with exactly this code and log; the module's state (or, when stateless, all state) unchanged."""
    learning, root = chain.learning_state(), chain.app.store.root_hash
    result = chain.deliver(signer, msg)
    assert (result.codespace, result.code, result.log) == (codespace, code, log)
    assert chain.learning_state() == learning
    if stateless:
        assert chain.app.store.root_hash == root


@pytest.mark.parametrize("case", CREATE_RULES)
def test_create_run_rules(chain: LearningChain, case: str) -> None:
    assert_refused(chain, CREATOR, *CREATE_RULES[case])


COMMIT_RULES = {
    "run-not-found": (W2, commit(W2, run_id=9), 5, "run 9: training run not found"),
    "not-a-worker": (OUTSIDER, commit(OUTSIDER), 6, f"{addr(OUTSIDER)} in run 1: signer is not a worker of the run"),
    "round-out-of-range": (W2, commit(W2, round_=2), 7, "round 2 of a 2-round run: round is outside the run"),
    "already-committed": (W1, commit(W1), 8, f"run 1 round 0 worker {addr(W1)}: checkpoint already committed"),
    "config-mismatch": (
        W2,
        commit(W2, config_hash=h("other")),
        9,
        f"got {h('other').hex()}, run has {CONFIG.hex()}: config hash differs from the run's",
    ),
    "forged-start-round-0": (
        W2,
        commit(W2, start_weights_hash=FORGED),
        10,
        f"start {FORGED.hex()} is not the run's initial weights {INIT.hex()}: "
        "start weights do not chain from the agreed global state",
    ),
    "forged-start-round-1": (
        W1,
        commit(W1, round_=1, start_weights_hash=FORGED),
        10,
        f"start {FORGED.hex()} is not the round 0 global weights {h('global 0').hex()}: "
        "start weights do not chain from the agreed global state",
    ),
    "previous-round-empty": (
        W1,
        commit(W1, run_id=2, round_=1),
        10,
        "round 0 has no commits yet: start weights do not chain from the agreed global state",
    ),
    "global-weights-differ": (
        W2,
        commit(W2, global_weights_hash=FORGED),
        11,
        f"round 0 agreed global weights {h('global 0').hex()}, outer momentum "
        f"{h('momentum 0').hex()}: global state differs from the round's first commit",
    ),
    "outer-momentum-differs": (
        W2,
        commit(W2, outer_momentum_hash=FORGED),
        11,
        f"round 0 agreed global weights {h('global 0').hex()}, outer momentum "
        f"{h('momentum 0').hex()}: global state differs from the round's first commit",
    ),
    "short-hash": (W2, commit(W2, optimizer_hash=b""), 2, "optimizer_hash is 0 bytes: hash must be 32 bytes"),
}


@pytest.mark.parametrize("case", COMMIT_RULES)
def test_commit_checkpoint_rules(chain: LearningChain, case: str) -> None:
    signer, msg, code, log = COMMIT_RULES[case]
    assert_refused(chain, signer, msg, "learning", code, log, stateless=code == 2)


def test_checkpoints_chain_round_to_round_in_worker_order(chain: LearningChain) -> None:
    result = chain.ok(W2, commit(W2))
    assert attributes(result, "commit_checkpoint") == {
        "run_id": "1",
        "round": "0",
        "worker": addr(W2),
        "weights_hash": h(f"weights 0 {addr(W2)}").hex(),
        "global_weights_hash": h("global 0").hex(),
    }
    first, second = sorted((W1, W2), key=lambda k: bech32.decode(addr(k)), reverse=True)
    chain.ok(first, commit(first, round_=1))  # commit order is not query order
    chain.ok(second, commit(second, round_=1))
    for round_ in (0, 1):
        reply = chain.query(
            QUERY + "Checkpoints",
            query_pb2.QueryCheckpointsRequest(run_id=1, round=round_),
            query_pb2.QueryCheckpointsResponse,
        )
        assert [c.worker for c in reply.checkpoints] == [addr(second), addr(first)]
    one = chain.query(
        QUERY + "Checkpoint",
        query_pb2.QueryCheckpointRequest(run_id=1, round=1, worker=addr(W1)),
        query_pb2.QueryCheckpointResponse,
    ).checkpoint
    drawn = sorted(plain(one).pop("verifiers"), key=lambda v: v["address"])
    assert drawn == sorted(drawn_by_power(chain, W1), key=lambda v: v["address"])
    assert {k: v for k, v in plain(one).items() if k != "verifiers"} == {
        "run_id": 1,
        "round": 1,
        "worker": addr(W1),
        **{f.name: v.hex() for f, v in commit(W1, round_=1).ListFields() if isinstance(v, bytes)},
        "height": chain.height - (1 if first == W1 else 0),
        "valid_verdicts": 0,
        "invalid_verdicts": 0,
        "outcome": learning_pb2.OUTCOME_PENDING,
        "deadline_height": chain.height - (1 if first == W1 else 0) + 20,
        "settle_height": 0,
        "paid": False,
    }


def drawn_by_power(chain: LearningChain, worker: secp256k1.PrivateKey) -> list[dict[str, Any]]:
    """Every host but ``worker`` with its power: the verifiers drawn when all are, as a set (draw order)."""
    powers = chain.app.stake_keeper.validator_powers(chain.context())
    return [{"address": bech32.encode(h), "weight": p} for h, p in powers.items() if h != bech32.decode(addr(worker))]


def test_verdicts_are_counted_once_per_verifier(chain: LearningChain) -> None:
    result = chain.ok(V2, verdict(V2, W1))
    assert attributes(result, "verdict") == {
        "run_id": "1",
        "round": "0",
        "worker": addr(W1),
        "verifier": addr(V2),
        "valid": "true",
    }
    chain.ok(V1, verdict(V1, W1, valid=False))
    for signer, msg, code, log in (
        (V1, verdict(V1, W1), 13, f"by {addr(V1)}: verdict already submitted"),
        (V1, verdict(V1, W2), 12, f"run 1 round 0 worker {addr(W2)}: checkpoint not found"),
        (W1, verdict(W1, W1), 15, f"{addr(W1)} committed this checkpoint: a worker cannot judge its own checkpoint"),
        (OUTSIDER, verdict(OUTSIDER, W1, reason="r" * 17), 14, "17 bytes, at most 16: verdict reason too long"),
        (
            OUTSIDER,
            verdict(OUTSIDER, W1, replay_weights_hash=b"\x00"),
            2,
            "replay_weights_hash is 1 bytes: hash must be 32 bytes",
        ),
    ):
        assert_refused(chain, signer, msg, "learning", code, log, stateless=code == 2)
    checkpoint = chain.query(
        QUERY + "Checkpoint",
        query_pb2.QueryCheckpointRequest(run_id=1, round=0, worker=addr(W1)),
        query_pb2.QueryCheckpointResponse,
    ).checkpoint
    assert (checkpoint.valid_verdicts, checkpoint.invalid_verdicts) == (1, 1)
    request = query_pb2.QueryVerdictsRequest(
        run_id=1, round=0, worker=addr(W1), pagination=pagination_pb2.PageRequest(limit=1)
    )
    first = chain.query(QUERY + "Verdicts", request, query_pb2.QueryVerdictsResponse)
    request.pagination.key = first.pagination.next_key
    second = chain.query(QUERY + "Verdicts", request, query_pb2.QueryVerdictsResponse)
    assert not second.pagination.next_key
    verifiers = sorted((V1, V2), key=lambda k: bech32.decode(addr(k)))
    assert [v.verifier for v in (*first.verdicts, *second.verdicts)] == [addr(k) for k in verifiers]
    assert {v.verifier: (v.valid, v.reason) for v in (*first.verdicts, *second.verdicts)} == {
        addr(V1): (False, "weights differ"),
        addr(V2): (True, ""),
    }


def test_queries_params_pages_and_errors(chain: LearningChain) -> None:
    params = chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params
    assert plain(params) == PARAMS
    request = query_pb2.QueryRunsRequest(pagination=pagination_pb2.PageRequest(limit=1, count_total=True))
    page = chain.query(QUERY + "Runs", request, query_pb2.QueryRunsResponse)
    assert [r.id for r in page.runs] == [1] and page.pagination.total == 2
    request.pagination.key = page.pagination.next_key
    assert [r.id for r in chain.query(QUERY + "Runs", request, query_pb2.QueryRunsResponse).runs] == [2]
    empty = chain.query(
        QUERY + "Checkpoints", query_pb2.QueryCheckpointsRequest(run_id=1, round=1), query_pb2.QueryCheckpointsResponse
    )
    assert list(empty.checkpoints) == []
    for path, request_, code in (
        ("Run", query_pb2.QueryRunRequest(run_id=7), 38),
        ("Checkpoint", query_pb2.QueryCheckpointRequest(run_id=1, round=0, worker=addr(W2)), 38),
        ("Checkpoint", query_pb2.QueryCheckpointRequest(run_id=1, round=0, worker="gonka1bad"), 7),
        ("Verdicts", query_pb2.QueryVerdictsRequest(run_id=1, round=0, worker=""), 7),
    ):
        reply = chain.app.query(abci.RequestQuery(path=QUERY + path, data=request_.SerializeToString()))
        assert (reply.codespace, reply.code) == ("sdk", code), (path, reply.log)


# --- genesis ------------------------------------------------------------------------------------


@pytest.fixture
def exported(chain: LearningChain) -> tuple[LearningChain, dict[str, Any]]:
    """The fixture chain after two full rounds and three verdicts, and its exported learning genesis."""
    chain.ok(W2, commit(W2))
    chain.ok(W2, commit(W2, round_=1))
    chain.ok(W1, commit(W1, round_=1))
    chain.ok(V1, verdict(V1, W1))
    chain.ok(V2, verdict(V2, W1, valid=False))
    chain.ok(V1, verdict(V1, W2, round_=1))
    state = LearningModule(chain.app.learning_keeper).export_genesis(chain.context())
    return chain, json.loads(json.dumps(state))


def test_genesis_round_trip_keeps_state_and_app_hash(
    exported: tuple[LearningChain, dict[str, Any]], tmp_path: Path
) -> None:
    chain, state = exported
    assert state["next_run_id"] == "3" and len(state["runs"]) == 2
    assert len(state["checkpoints"]) == 4 and len(state["verdicts"]) == 3
    escrow = chain.balance(module_account())
    assert escrow == 2 * BUDGET
    imported = LearningChain(tmp_path / "imported", state, escrow)
    assert imported.learning_state() == chain.learning_state()
    assert LearningModule(imported.app.learning_keeper).export_genesis(imported.context()) == state
    shuffled = {**state, "checkpoints": state["checkpoints"][::-1], "verdicts": state["verdicts"][::-1]}
    reordered = LearningChain(tmp_path / "reordered", shuffled, escrow)
    assert reordered.app.store.root_hash == imported.app.store.root_hash  # the same state, whatever the order
    result = imported.ok(CREATOR, create_run())
    assert attributes(result, "create_run")["run_id"] == "3"
    imported.ok(W1, commit(W1, run_id=2))


def _edit(state: dict[str, Any], edit: str) -> dict[str, Any]:
    state = copy.deepcopy(state)
    if edit == "tally":
        state["checkpoints"][0]["valid_verdicts"] = "5"
    elif edit == "short-hash":
        state["checkpoints"][-1]["start_weights_hash"] = "AAAA" * 10
    elif edit == "run-id":
        state["runs"][1]["id"] = "3"
    elif edit == "params":
        state["params"]["max_workers"] = 0
    elif edit == "orphan-verdict":
        state["verdicts"][0]["round"] = 1
        state["verdicts"][0]["worker"] = addr(OUTSIDER)
    return state


@pytest.mark.parametrize(
    "edit, words",
    [
        ("tally", "verdict tallies differ from the verdicts listed"),
        ("short-hash", "start_weights_hash is 30 bytes: hash must be 32 bytes"),
        ("run-id", "is repeated or not below next_run_id"),
        ("params", "learning param max_workers must be positive"),
        ("orphan-verdict", "checkpoint not found"),
    ],
)
def test_invalid_genesis_is_refused(
    exported: tuple[LearningChain, dict[str, Any]], tmp_path: Path, edit: str, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        LearningChain(tmp_path / "bad", _edit(exported[1], edit))


def test_forged_genesis_checkpoint_breaks_the_chain(
    exported: tuple[LearningChain, dict[str, Any]], tmp_path: Path
) -> None:
    state = copy.deepcopy(exported[1])
    [late] = [c for c in state["checkpoints"] if c.get("round") == 1 and c["worker"] == addr(W1)]
    late["start_weights_hash"] = state["checkpoints"][0]["weights_hash"]
    with pytest.raises(ValueError, match="start weights do not chain from the agreed global state"):
        LearningChain(tmp_path / "bad", state)


def test_default_genesis_is_the_default_app_state() -> None:
    default = message_dict(learning_genesis.default_genesis())
    in_file = genesis.default_app_state()["learning"]
    assert json_format.ParseDict(in_file, GenesisState()) == json_format.ParseDict(default, GenesisState())


# --- CLI input: refused before anything is signed ------------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (
            [
                "tx",
                "learning",
                "commit-checkpoint",
                "1",
                "0",
                *[
                    a
                    for f in (
                        "start-weights",
                        "weights",
                        "optimizer",
                        "data-order",
                        "config",
                        "global-weights",
                        "outer-momentum",
                    )
                    for a in (f"--{f}-hash", "ab" * 32)
                ],
                "--weights-hash",
                "xyz",
            ],
            "invalid --weights-hash 'xyz': expected 64 hex characters",
        ),
        (
            [
                "tx",
                "learning",
                "submit-verdict",
                "1",
                "zero",
                "ADDR",
                "valid",
                "--replay-weights-hash",
                "00",
                "--replay-optimizer-hash",
                "00",
            ],
            "invalid round 'zero'",
        ),
        (
            [
                "tx",
                "learning",
                "submit-verdict",
                "1",
                "0",
                "ADDR",
                "maybe",
                "--replay-weights-hash",
                "00",
                "--replay-optimizer-hash",
                "00",
            ],
            "invalid verdict 'maybe'",
        ),
        (
            [
                "tx",
                "learning",
                "create-run",
                "--workers",
                "ADDR,gonka1nope",
                "--config-hash",
                "00" * 32,
                "--initial-weights-hash",
                "00" * 32,
                "--inner-steps",
                "5",
                "--rounds",
                "2",
                "--budget",
                "100",
            ],
            "invalid address",
        ),
        (["query", "learning", "checkpoint", "1", "-1", "ADDR"], "invalid round '-1'"),
        (["tx", "learning", "claim", "1", "x"], "invalid round 'x'"),
    ],
)
def test_bad_cli_input_is_one_line(capsys: pytest.CaptureFixture[str], args: list[str], words: str) -> None:
    args = [addr(W1) if a == "ADDR" else a for a in args]
    if args[0] == "tx":
        args += ["--from", "nobody", "--keyring-backend", "test", "--home", "/nonexistent"]
    with pytest.raises(SystemExit) as exited:
        cli.main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 1 and err.count("\n") == 1 and words in err, err
