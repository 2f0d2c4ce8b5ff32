"""x/vesting: epoch schedules (exact parts, the remainder first, released exactly at each epoch start), locked
coins that cannot be sent but can be deposited as collateral and come back locked as far as still
scheduled, genesis continuous and delayed vesting accounts unlocking by block time, the queries, params,
export and import, and the invariants (checked after every in-process block).

Epochs are tests/test_stake.py's short ones (length 6: epoch n ≥ 1 starts at height 6n + 1, its
set-validators stage at 6n + 3). Coins are vested from ``PAYER``'s address, funded at genesis (a module
address no module declares: vest pays from any module name's address that holds coins). Rewards are off
(initial_epoch_reward 0) so that only vesting moves what these tests read.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from test_stake import KEYS, SHORT_EPOCHS, consensus_key, deliver, deposit, events, withdraw

from gonkad import genesis
from protogen.gonka.vesting.v1 import query_pb2, tx_pb2, vesting_pb2
from sdk.address import module_address
from sdk.client.txbuilder import address_of
from sdk.coins import Coins
from sdk.crypto import bech32, secp256k1
from sdk.errors import ABCIError, ErrInsufficientFunds, ErrInvalidRequest
from sdk.services import gonka
from sdk.store import PRESENT
from x.genutil.gentx import build_gentx
from x.vesting import keys as vesting_keys
from x.vesting.keeper import split

CHAIN = "gonka-stake"
DENOM = "ngonka"
GNK = 10**9
FUNDS = 10_000 * GNK
PAYER = "vesting_test_payer"
PAYER_ADDRESS = module_address(PAYER)
AUTHORITY = secp256k1.PrivateKey(b"\x5a" * 32)
VESTEE = secp256k1.PrivateKey(b"\x5b" * 32)
FREE = 1_000
QUERY = gonka("vesting").query
S = 10**9


def vesting_chain(
    path: Path,
    collateral: tuple[int, ...] = (),
    vesting: dict[str, Any] | None = None,
    accounts: dict[str, list[tuple[str, int]]] | None = None,
) -> InProcessChain:
    state = genesis.default_app_state()
    state["epochs"] = {"params": dict(SHORT_EPOCHS)}
    if "rewards" in state:
        state["rewards"]["params"]["initial_epoch_reward"] = "0"
    if vesting is not None:
        state["vesting"] = vesting
    gentxs = [
        build_gentx(KEYS[i], f"host{i}", consensus_key(i), (DENOM, amount), CHAIN)
        for i, amount in enumerate(collateral)
    ]
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
    funded = {address_of(k): [(DENOM, FUNDS)] for k in KEYS[: len(collateral)]}
    funded[bech32.encode(PAYER_ADDRESS)] = [(DENOM, FUNDS), ("uother", 100)]
    funded[address_of(VESTEE)] = [(DENOM, FREE)]
    funded.update(accounts or {})
    return InProcessChain(
        path, funded, chain_id=CHAIN, app_state=state, authority=secp256k1.address_bytes(AUTHORITY.public_key)
    )


def vest(chain: InProcessChain, to: bytes, coins: Coins, epochs: int) -> Any:
    return chain.block(during=lambda ctx: chain.app.vesting_keeper.vest(ctx, PAYER, to, coins, epochs))


def raw(key: secp256k1.PrivateKey) -> bytes:
    return secp256k1.address_bytes(key.public_key)


def locked(chain: InProcessChain, address: bytes, denom: str = DENOM) -> int:
    reply = chain.query(
        QUERY + "Locked", query_pb2.QueryLockedRequest(address=bech32.encode(address)), query_pb2.QueryLockedResponse
    )
    return sum(int(c.amount) for c in reply.locked if c.denom == denom)


def locked_reply(chain: InProcessChain, address: bytes) -> query_pb2.QueryLockedResponse:
    return chain.query(
        QUERY + "Locked", query_pb2.QueryLockedRequest(address=bech32.encode(address)), query_pb2.QueryLockedResponse
    )


def spendable(chain: InProcessChain, address: bytes, denom: str = DENOM) -> int:
    reply = chain.query(
        "/cosmos.bank.v1beta1.Query/SpendableBalanceByDenom",
        bank_query.QuerySpendableBalanceByDenomRequest(address=bech32.encode(address), denom=denom),
        bank_query.QuerySpendableBalanceByDenomResponse,
    )
    return int(reply.balance.amount)


def schedule(chain: InProcessChain, address: bytes) -> query_pb2.QueryScheduleResponse:
    return chain.query(
        QUERY + "Schedule",
        query_pb2.QueryScheduleRequest(address=bech32.encode(address)),
        query_pb2.QueryScheduleResponse,
    )


def parts(chain: InProcessChain, address: bytes) -> list[tuple[int, dict[str, int]]]:
    return [(p.release_epoch, {c.denom: int(c.amount) for c in p.amount}) for p in schedule(chain, address).parts]


def send(key: secp256k1.PrivateKey, to: str, amount: int) -> bank_tx.MsgSend:
    return bank_tx.MsgSend(
        from_address=address_of(key), to_address=to, amount=[{"denom": DENOM, "amount": str(amount)}]
    )


# --- unit ---------------------------------------------------------------------------------------------------


def test_split_puts_the_remainder_in_the_first_part() -> None:
    assert split(1003, 4) == [253, 250, 250, 250]
    assert split(2, 4) == [2, 0, 0, 0]
    assert split(180, 180) == [1] * 180
    for amount in (0, 1, 7, 10**30 + 17):
        for epochs in (1, 3, 180):
            assert sum(split(amount, epochs)) == amount


# --- epoch schedules --------------------------------------------------------------------------------------


def test_vest_exact_parts_released_at_each_epoch_start(tmp_path: Path) -> None:
    vestee = raw(VESTEE)
    with vesting_chain(tmp_path) as chain:
        payer = chain.balance(PAYER_ADDRESS)
        response = vest(chain, vestee, Coins(((DENOM, 1003), ("uother", 2))), 4)  # height 2, epoch 0
        assert events(response, "vest") == [
            {
                "recipient": address_of(VESTEE),
                "sender": bech32.encode(PAYER_ADDRESS),
                "amount": "1003ngonka,2uother",
                "epochs": "4",
                "first_release_epoch": "1",
            }
        ]
        assert chain.balance(PAYER_ADDRESS) == payer - 1003
        assert chain.balance(vestee) == FREE + 1003
        assert parts(chain, vestee) == [
            (1, {DENOM: 253, "uother": 2}),
            (2, {DENOM: 250}),
            (3, {DENOM: 250}),
            (4, {DENOM: 250}),
        ]
        reply = locked_reply(chain, vestee)
        assert [(c.denom, c.amount) for c in reply.locked] == [(DENOM, "1003"), ("uother", "2")]
        assert spendable(chain, vestee) == FREE and spendable(chain, vestee, "uother") == 0
        # a second schedule in epoch 1 adds to the parts it shares
        expected = {7: 750, 13: 500 + 10 - 5, 19: 250 + 5 - 5, 25: 0}
        current = 1003
        while chain.height < 27:
            if chain.height == 8:
                response = vest(chain, vestee, Coins(((DENOM, 10),)), 2)  # epochs 2 and 3, 5 each
                current += 10
                assert parts(chain, vestee) == [(2, {DENOM: 255}), (3, {DENOM: 255}), (4, {DENOM: 250})]
            else:
                response = chain.block()
            height = chain.height
            released = events(response, "vesting_release")
            if height in expected:
                assert len(released) == 1 and released[0]["address"] == address_of(VESTEE), height
                current = expected[height]
            else:
                assert released == [], height
            assert locked(chain, vestee) == current, height
            assert spendable(chain, vestee) == chain.balance(vestee) - current, height
            assert locked(chain, vestee, "uother") == (2 if height < 7 else 0), height
        totals = schedule(chain, vestee).totals
        assert [(c.denom, c.amount) for c in totals.scheduled] == [(DENOM, "1013"), ("uother", "2")]
        assert list(totals.vested) == list(totals.scheduled) and not schedule(chain, vestee).parts


def test_vest_refuses_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    with vesting_chain(tmp_path) as chain:
        ctx = chain.context()
        k = chain.app.vesting_keeper
        for epochs in (0, 100_001):
            with pytest.raises(ABCIError) as refused:
                k.vest(ctx, PAYER, raw(VESTEE), Coins(((DENOM, 5),)), epochs)
            assert refused.value.kind == ErrInvalidRequest
        with pytest.raises(ABCIError) as short:
            k.vest(ctx, "nobody", raw(VESTEE), Coins(((DENOM, 5),)), 3)
        assert short.value.kind == ErrInsufficientFunds
        assert ctx.store.changes() == {}  # type: ignore[attr-defined]
        assert k.vesting_epochs(ctx) == 180


def test_locked_coins_cannot_be_sent(tmp_path: Path) -> None:
    vestee, other = raw(VESTEE), address_of(KEYS[7])
    with vesting_chain(tmp_path) as chain:
        vest(chain, vestee, Coins(((DENOM, 5_000),)), 5)
        before = chain.balance(vestee), chain.balance(other)
        result, _ = deliver(chain, VESTEE, send(VESTEE, other, FREE + 1))
        assert (result.codespace, result.code) == ("sdk", 5)
        assert f"spendable balance {FREE}{DENOM} is smaller than {FREE + 1}{DENOM}" in result.log
        assert (chain.balance(vestee), chain.balance(other)) == before
        assert locked(chain, vestee) == 5_000
        result, _ = deliver(chain, VESTEE, send(VESTEE, other, FREE))
        assert result.code == 0, result.log
        assert chain.balance(vestee) == 5_000 and spendable(chain, vestee) == 0
        while chain.height < 7:  # epoch 1 releases 1000
            chain.block()
        assert spendable(chain, vestee) == 1_000
        assert deliver(chain, VESTEE, send(VESTEE, other, 1_001))[0].code == 5
        assert deliver(chain, VESTEE, send(VESTEE, other, 1_000))[0].code == 0
        assert chain.balance(vestee) == locked(chain, vestee) == 4_000


def test_locked_coins_are_collateral_and_come_back_locked(tmp_path: Path) -> None:
    """A host deposits locked coins (the deposit spends them, the lock does not stop it), withdraws all its
    collateral, and gets back, at the unbonding's set-validators stage, coins locked as far as still
    scheduled; the schedule releases them on."""
    host, C = raw(KEYS[0]), 1_000 * GNK
    with vesting_chain(tmp_path, collateral=(C, C)) as chain:
        assert locked_reply(chain, host).delegated_free[0].amount == str(C)  # the gentx's deposit: free coins
        vest(chain, host, Coins(((DENOM, 6_000),)), 3)  # height 2: 2000 at epochs 1, 2, 3
        balance = chain.balance(host)
        assert spendable(chain, host) == balance - 6_000
        assert deliver(chain, KEYS[0], deposit(KEYS[0], balance + 1))[0].code == 5  # never more than the balance
        result, _ = deliver(chain, KEYS[0], deposit(KEYS[0], balance))  # height 4
        assert result.code == 0, result.log
        reply = locked_reply(chain, host)
        assert chain.balance(host) == 0 and not reply.locked
        assert [c.amount for c in reply.vesting] == ["6000"]
        assert [c.amount for c in reply.delegated_vesting] == ["6000"]
        assert [c.amount for c in reply.delegated_free] == [str(C + balance - 6_000)]
        total = C + balance
        result, _ = deliver(chain, KEYS[0], withdraw(KEYS[0], total))  # height 5: paid at height 9
        assert result.code == 0, result.log
        while chain.height < 8:
            chain.block()
            assert chain.balance(host) == 0 and locked(chain, host) == 0  # 4000 vesting, all of it deposited
        response = chain.block()  # height 9: epoch 1's set-validators stage
        assert events(response, "complete_unbonding")[0]["operator"] == address_of(KEYS[0])
        assert chain.balance(host) == total
        assert locked(chain, host) == 4_000 and spendable(chain, host) == total - 4_000
        reply = locked_reply(chain, host)
        assert not reply.delegated_vesting and not reply.delegated_free
        while chain.height < 13:
            chain.block()
        assert locked(chain, host) == 2_000
        result, _ = deliver(chain, KEYS[0], send(KEYS[0], address_of(KEYS[7]), total - 2_000 + 1))
        assert result.code == 5 and chain.balance(host) == total
        while chain.height < 19:
            chain.block()
        assert locked(chain, host) == 0 and spendable(chain, host) == total


def test_a_new_schedule_is_locked_even_after_deposited_vesting_coins_vested(tmp_path: Path) -> None:
    """delegated_vesting above what is still vesting counts as free once a new schedule comes: new coins
    are locked."""
    host, C = raw(KEYS[0]), 1_000 * GNK
    with vesting_chain(tmp_path, collateral=(C, C)) as chain:
        vest(chain, host, Coins(((DENOM, 300),)), 1)
        assert deliver(chain, KEYS[0], deposit(KEYS[0], chain.balance(host)))[0].code == 0
        while chain.height < 7:
            chain.block()  # released: delegated_vesting 300 stands over nothing vesting
        assert locked_reply(chain, host).delegated_vesting[0].amount == "300"
        vest(chain, host, Coins(((DENOM, 500),)), 2)
        assert locked(chain, host) == 500 == chain.balance(host)
        reply = locked_reply(chain, host)
        assert not reply.delegated_vesting
        assert spendable(chain, host) == 0


# --- genesis vesting accounts ---------------------------------------------------------------------------


def test_continuous_and_delayed_genesis_accounts_unlock_by_block_time(tmp_path: Path) -> None:
    cont, delayed = secp256k1.PrivateKey(b"\x61" * 32), secp256k1.PrivateKey(b"\x62" * 32)
    accounts = {address_of(cont): [(DENOM, 1_000 + FREE)], address_of(delayed): [(DENOM, 700)]}
    vesting = {
        "params": {"reward_vesting_epochs": 3},
        "continuous_vesting_accounts": [
            {
                "base_vesting_account": {
                    "base_account": {"address": address_of(cont)},
                    "original_vesting": [{"denom": DENOM, "amount": "1000"}],
                    "end_time": "2000",
                },
                "start_time": "1000",
            }
        ],
        "delayed_vesting_accounts": [
            {
                "base_vesting_account": {
                    "base_account": {"address": address_of(delayed)},
                    "original_vesting": [{"denom": DENOM, "amount": "700"}],
                    "end_time": "1500",
                }
            }
        ],
    }
    with vesting_chain(tmp_path, vesting=vesting, accounts=accounts) as chain:
        assert chain.app.vesting_keeper.vesting_epochs(chain.context()) == 3
        for seconds, nanos, expect_cont, expect_delayed in (
            (500, 0, 1000, 700),
            (1000, 999_999_999, 1000, 700),
            (1001, 0, 999, 700),
            (1250, 5, 750, 700),
            (1499, 999_999_999, 501, 700),
            (1500, 0, 500, 0),
            (1999, 0, 1, 0),
            (2000, 0, 0, 0),
        ):
            chain.block(time_ns=seconds * S + nanos)
            assert (locked(chain, raw(cont)), locked(chain, raw(delayed))) == (expect_cont, expect_delayed), seconds
            assert spendable(chain, raw(cont)) == 1_000 + FREE - expect_cont
            if seconds == 1250:
                result, _ = deliver(chain, cont, send(cont, address_of(KEYS[7]), FREE + 251), time_ns=1250 * S)
                assert result.code == 5 and "spendable balance 1250ngonka" in result.log
        exported = chain.app.export_app_state()["vesting"]
        assert exported["continuous_vesting_accounts"][0]["start_time"] == "1000"
        assert exported["delayed_vesting_accounts"][0]["base_vesting_account"]["end_time"] == "1500"


@pytest.mark.parametrize(
    "edit,words",
    [
        (lambda v: v["continuous_vesting_accounts"][0].update(start_time="3000"), "start_time must be before"),
        (
            lambda v: v["continuous_vesting_accounts"][0]["base_vesting_account"]["original_vesting"][0].update(
                amount="5000"
            ),
            "locked",
        ),
        (
            lambda v: v["continuous_vesting_accounts"][0]["base_vesting_account"].update(
                delegated_free=[{"denom": DENOM, "amount": "1"}]
            ),
            "belong in the accounts list",
        ),
        (
            lambda v: v.update(
                parts=[
                    {"address": address_of(VESTEE), "release_epoch": "3", "amount": [{"denom": DENOM, "amount": "5"}]}
                ]
            ),
            "no totals",
        ),
        (lambda v: v.update(params={"reward_vesting_epochs": 0}), "reward_vesting_epochs"),
    ],
)
def test_invalid_vesting_genesis_is_refused(tmp_path: Path, edit: Any, words: str) -> None:
    cont = secp256k1.PrivateKey(b"\x61" * 32)
    vesting: dict[str, Any] = {
        "continuous_vesting_accounts": [
            {
                "base_vesting_account": {
                    "base_account": {"address": address_of(cont)},
                    "original_vesting": [{"denom": DENOM, "amount": "1000"}],
                    "end_time": "2000",
                },
                "start_time": "1000",
            }
        ]
    }
    edit(vesting)
    with pytest.raises(Exception) as refused:
        vesting_chain(tmp_path, vesting=vesting, accounts={address_of(cont): [(DENOM, 1_000)]})
    assert words in str(refused.value)


# --- export, params, invariants --------------------------------------------------------------------------


def test_export_import_round_trip(tmp_path: Path) -> None:
    host, C = raw(KEYS[0]), 1_000 * GNK
    cont = secp256k1.PrivateKey(b"\x61" * 32)
    vesting = {
        "continuous_vesting_accounts": [
            {
                "base_vesting_account": {
                    "base_account": {"address": address_of(cont)},
                    "original_vesting": [{"denom": DENOM, "amount": "1000"}],
                    "end_time": "2000",
                },
                "start_time": "1000",
            }
        ]
    }
    with vesting_chain(
        tmp_path / "old", collateral=(C, C), vesting=vesting, accounts={address_of(cont): [(DENOM, 1_000)]}
    ) as chain:
        vest(chain, host, Coins(((DENOM, 6_000),)), 3)
        vest(chain, raw(VESTEE), Coins(((DENOM, 10),)), 4)
        assert deliver(chain, KEYS[0], deposit(KEYS[0], chain.balance(host) - 10))[0].code == 0
        chain.block(time_ns=1500 * S)
        exported = chain.app.export_app_state()
        section = exported["vesting"]
        assert section["last_block_time_ns"] == str(1500 * S)
        assert len(section["parts"]) == 3 + 4 and len(section["accounts"]) >= 3
        height = chain.height
        before = {
            a: locked(chain, bech32.decode(a)) for a in (address_of(KEYS[0]), address_of(VESTEE), address_of(cont))
        }
        assert before[address_of(cont)] == 500
        with InProcessChain(
            tmp_path / "new",
            {},
            chain_id=CHAIN,
            app_state=json.loads(json.dumps(exported)),
            initial_height=height + 1,
            first_block=False,
        ) as new:
            new.block(time_ns=1500 * S)  # commits the imported state (the same block time)
            assert new.app.export_app_state()["vesting"] == section
            assert {a: locked(new, bech32.decode(a)) for a in before} == before
            prefix = vesting_keys.STORE_PREFIX
            assert [(k, v) for k, v in new.app.store.items_at(new.height) if k.startswith(prefix)] == [
                (k, v) for k, v in chain.app.store.items_at(height) if k.startswith(prefix)
            ]


def test_params_change_only_by_the_authority(tmp_path: Path) -> None:
    with vesting_chain(tmp_path, accounts={address_of(AUTHORITY): [(DENOM, FREE)]}) as chain:
        msg = tx_pb2.MsgUpdateParams(
            authority=address_of(AUTHORITY), params=vesting_pb2.Params(reward_vesting_epochs=3)
        )
        assert deliver(chain, AUTHORITY, msg)[0].code == 0
        reply = chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse)
        assert reply.params.reward_vesting_epochs == 3
        bad = tx_pb2.MsgUpdateParams(authority=address_of(AUTHORITY), params=vesting_pb2.Params())
        result, _ = deliver(chain, AUTHORITY, bad)
        assert (result.codespace, result.code) == ("sdk", 18) and "reward_vesting_epochs" in result.log
        other = tx_pb2.MsgUpdateParams(authority=address_of(VESTEE), params=vesting_pb2.Params(reward_vesting_epochs=9))
        result, _ = deliver(chain, VESTEE, other)
        assert (result.codespace, result.code) == ("gov", 13)
        assert chain.app.vesting_keeper.vesting_epochs(chain.context()) == 3


def test_invariants_catch_broken_accounting(tmp_path: Path) -> None:
    vestee = raw(VESTEE)
    with vesting_chain(tmp_path) as chain:
        vest(chain, vestee, Coins(((DENOM, 100),)), 2)
        ctx = chain.context()
        invariants = chain.app.invariants
        assert invariants["vesting/scheduled-accounted"](ctx) is None
        assert invariants["vesting/locked-held"](ctx) is None
        store = ctx.kv(vesting_keys.STORE_PREFIX)
        # epoch 2's part one short: the rate (50) falls by 1 at epoch 2 and by 49, not 50, at epoch 3
        store.set(
            vesting_keys.change_key(2, vestee),
            vesting_pb2.RateChange(
                address=bech32.encode(vestee), epoch=2, decrease=[{"denom": DENOM, "amount": "1"}]
            ).SerializeToString(),
        )
        store.set(vesting_keys.account_change_key(vestee, 2), PRESENT)
        key = vesting_keys.change_key(3, vestee)
        change = vesting_pb2.RateChange.FromString(store.get(key))
        change.decrease[0].amount = "49"
        store.set(key, change.SerializeToString())
        assert "vested 0 + locked 99ngonka != scheduled 100ngonka" in invariants["vesting/scheduled-accounted"](ctx)
        ctx = chain.context()
        chain.app.bank_keeper._set_balance(ctx, vestee, DENOM, 99)  # as if locked coins had left
        assert "holds 99ngonka but has 100ngonka locked" in invariants["vesting/locked-held"](ctx)


def test_cli_queries_are_registered() -> None:
    from gonkad.cli import build_parser

    parser = build_parser()
    for argv in (
        ["query", "vesting", "schedule", address_of(VESTEE)],
        ["query", "vesting", "locked", address_of(VESTEE)],
        ["query", "vesting", "params"],
    ):
        args = parser.parse_args(argv)
        assert callable(args.func)


def clawback(chain: InProcessChain, owner: bytes, amount: int, denom: str = DENOM) -> tuple[int, Any]:
    taken: list[int] = []
    response = chain.block(
        during=lambda ctx: taken.append(chain.app.vesting_keeper.clawback(ctx, owner, PAYER, denom, amount))
    )
    return taken[0], response


def test_clawback_takes_the_latest_parts_first_and_the_rest_releases_as_before(tmp_path: Path) -> None:
    vestee = raw(VESTEE)
    with vesting_chain(tmp_path) as chain:
        vest(chain, vestee, Coins(((DENOM, 1003), ("uother", 2))), 4)
        payer = chain.balance(PAYER_ADDRESS)
        taken, response = clawback(chain, vestee, 300)  # the last part (250) and 50 of the one before
        assert taken == 300
        assert events(response, "vesting_clawback") == [
            {"address": address_of(VESTEE), "amount": f"300{DENOM}", "to": PAYER}
        ]
        assert parts(chain, vestee) == [(1, {DENOM: 253, "uother": 2}), (2, {DENOM: 250}), (3, {DENOM: 200})]
        assert locked(chain, vestee) == 703 and chain.balance(vestee) == FREE + 703
        assert chain.balance(PAYER_ADDRESS) == payer + 300 and spendable(chain, vestee) == FREE
        totals = schedule(chain, vestee).totals
        assert [(c.denom, c.amount) for c in totals.scheduled] == [(DENOM, "703"), ("uother", "2")]
        assert clawback(chain, vestee, 1, "uother")[0] == 1  # another denom's parts on their own
        assert parts(chain, vestee) == [(1, {DENOM: 253, "uother": 1}), (2, {DENOM: 250}), (3, {DENOM: 200})]
        while chain.height < 7:
            chain.block()
        assert [epoch for epoch, _ in parts(chain, vestee)] == [2, 3]  # epoch 1's start released its part
        assert clawback(chain, vestee, 460)[0] == 450  # no more than is still locked
        assert parts(chain, vestee) == [] and locked(chain, vestee) == 0
        assert spendable(chain, vestee) == chain.balance(vestee) == FREE + 253
        assert clawback(chain, vestee, 10)[0] == 0  # nothing locked: nothing taken, no error
        assert chain.app.vesting_keeper.get_rate(chain.context(), vestee) == {}
        assert chain.app.vesting_keeper.changes(chain.context(), vestee) == []


def test_clawback_of_part_of_a_long_run_splits_it() -> None:
    from x.vesting.keeper import cut_tail, schedule_segments

    segments = schedule_segments(DENOM, 4, {DENOM: 10}, [(9, {DENOM: -10}), (12, {"uother": 3})])
    assert segments == [(5, 9, 10)]
    assert cut_tail(segments, 25) == [(5, 6, 10), (6, 7, 5)]  # epochs 8 and 7 whole, 5 of epoch 6
    assert cut_tail(segments, 20) == [(5, 7, 10)]
    assert cut_tail(segments, 45) == [] and cut_tail(segments, 0) == segments
    assert cut_tail([(5, 6, 10)], 3) == [(5, 6, 7)]
