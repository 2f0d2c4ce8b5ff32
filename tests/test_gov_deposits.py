"""x/gov's deposits cannot be spent by proposals, and one proposal's end block never stalls the others.

Regression tests for a frozen governance: a passed proposal's ``MsgSend`` from the gov account spent other
proposals' deposits, the refund then failed in gov's end block on every block (its writes discarded) and the
proposals behind it stayed in their voting period. Deposits are now held by their own module account
(``gov_deposits``), which no message signs for and no ``MsgSend`` pays; a proposal may not nest a
``MsgSubmitProposal`` (``gov/12``); each proposal's end-block step runs in a branch of its own, so a failing
one is recorded on that proposal (``FAILED``, ``failed_reason``, deposits still owed) and the others go on.
Same chain as ``test_gov.py``: four validators of power 1,000, min deposit 1,000,000,000, 60 s of voting.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.duration_pb2 import Duration
from test_gov import (
    AUTHORITY,
    CHAIN,
    DENOM,
    GOV_ACCOUNT,
    MIN_DEPOSIT,
    NEW_EPOCHS,
    NO,
    OUTSIDER,
    SECOND,
    VALIDATORS,
    VETO,
    YES,
    GovChain,
    addr,
    epochs_update,
    submit_msg,
)
from test_gov import (
    DEPOSITS_ACCOUNT as DEPOSITS,
)

from sdk.client.txbuilder import sign_tx
from sdk.coins import Coins
from sdk.context import Context
from sdk.crypto import bech32
from x.gov import keys as gov_keys

THIEF = bytes([0x77]) * 20


def coins(amount: int) -> list[coin_pb2.Coin]:
    return [coin_pb2.Coin(denom=DENOM, amount=str(amount))]


def send_from_gov(amount: int) -> bank_tx.MsgSend:
    return bank_tx.MsgSend(from_address=AUTHORITY, to_address=addr(OUTSIDER), amount=coins(amount))


def all_vote(chain: GovChain, pid: int, options: tuple[int, ...] = (YES,) * 4) -> None:
    for key, option in zip(VALIDATORS, options):
        result = chain.vote(key, pid, option)
        assert result.code == 0, result.log


def results(response: abci.ResponseFinalizeBlock, kind: str = "active_proposal") -> dict[int, str]:
    """proposal id -> ``proposal_result`` of the block's ``kind`` events."""
    found = {}
    for event in response.events:
        if event.type == kind:
            attributes = {a.key: a.value for a in event.attributes}
            found[int(attributes["proposal_id"])] = attributes["proposal_result"]
    return found


def deposits_of(chain: GovChain, pid: int) -> list[tuple[str, str]]:
    reply = chain.query(
        "/cosmos.gov.v1.Query/Deposits",
        gov_query.QueryDepositsRequest(proposal_id=pid),
        gov_query.QueryDepositsResponse,
    )
    return [(d.depositor, d.amount[0].amount) for d in reply.deposits]


def votes_of(chain: GovChain, pid: int) -> list[str]:
    reply = chain.query(
        "/cosmos.gov.v1.Query/Votes", gov_query.QueryVotesRequest(proposal_id=pid), gov_query.QueryVotesResponse
    )
    return [v.voter for v in reply.votes]


def queued(chain: GovChain) -> list[bytes]:
    return [
        k
        for k in chain.gov_state()
        if k[len(gov_keys.STORE_PREFIX) :][:1] in (gov_keys.INACTIVE_QUEUE_PREFIX, gov_keys.ACTIVE_QUEUE_PREFIX)
    ]


@pytest.fixture
def chain(tmp_path: Path):  # type: ignore[no-untyped-def]
    with GovChain(tmp_path / "db") as c:
        yield c


def test_deposits_are_held_apart_and_no_send_pays_that_account(chain: GovChain) -> None:
    before = chain.balance(addr(OUTSIDER))
    pid = chain.submit(OUTSIDER, [epochs_update()])
    assert (chain.balance(DEPOSITS), chain.balance(GOV_ACCOUNT)) == (MIN_DEPOSIT, 0)
    account = chain.app.account_keeper.get_module_account(chain.context(), "gov_deposits")
    assert account is not None and list(account.permissions) == ["burner"]
    gift = chain.deliver(
        OUTSIDER, bank_tx.MsgSend(from_address=addr(OUTSIDER), to_address=bech32.encode(DEPOSITS), amount=coins(1))
    )
    assert (gift.codespace, gift.code) == ("sdk", 4), gift.log
    assert "is not allowed to receive funds" in gift.log
    assert chain.balance(DEPOSITS) == MIN_DEPOSIT and chain.balance(addr(OUTSIDER)) == before - MIN_DEPOSIT
    assert deposits_of(chain, pid) == [(addr(OUTSIDER), str(MIN_DEPOSIT))]


def test_a_passed_send_from_gov_cannot_spend_other_proposals_deposits(chain: GovChain) -> None:
    spender, other = VALIDATORS[0], VALIDATORS[1]
    before = {addr(k): chain.balance(addr(k)) for k in (spender, other, OUTSIDER)}
    a = chain.submit(spender, [send_from_gov(MIN_DEPOSIT)])  # B's deposit, were it in the gov account
    b = chain.submit(other, [epochs_update()])
    extra = MIN_DEPOSIT // 10
    chain.ok(OUTSIDER, gov_tx.MsgDeposit(proposal_id=b, depositor=addr(OUTSIDER), amount=coins(extra)))
    all_vote(chain, a)
    all_vote(chain, b)
    # A's voting period ends one second before B's: A alone is tallied, passes and executes
    chain.tick((chain.proposal(a).voting_end_time.ToNanoseconds() - chain.now) // SECOND)
    done = chain.proposal(a)
    assert done.status == gov_pb2.PROPOSAL_STATUS_FAILED
    assert done.failed_reason == (
        f"message 0 (/cosmos.bank.v1beta1.MsgSend): spendable balance 0{DENOM} is "
        f"smaller than {MIN_DEPOSIT}{DENOM}: insufficient funds"
    )
    assert chain.proposal(b).status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD
    assert sorted(deposits_of(chain, b)) == sorted([(addr(other), str(MIN_DEPOSIT)), (addr(OUTSIDER), str(extra))])
    assert (chain.balance(DEPOSITS), chain.balance(GOV_ACCOUNT)) == (MIN_DEPOSIT + extra, 0)
    assert chain.balance(addr(spender)) == before[addr(spender)]  # A's deposit refunded
    # B, one block later: tallied, executed and refunded as usual
    response = chain.tick(1)
    assert results(response) == {b: "proposal_passed"}
    assert chain.proposal(b).status == gov_pb2.PROPOSAL_STATUS_PASSED
    assert chain.epochs_params() == NEW_EPOCHS
    assert {a_: chain.balance(a_) for a_ in before} == before  # every deposit back, nothing sent by A
    assert (chain.balance(DEPOSITS), chain.balance(GOV_ACCOUNT)) == (0, 0)
    assert queued(chain) == []


def test_gov_spends_exactly_its_own_coins(tmp_path: Path) -> None:
    free = 5_000
    with GovChain(tmp_path / "db", extra_accounts={AUTHORITY: [(DENOM, free)]}) as chain:
        before = chain.balance(addr(OUTSIDER))
        too_much = chain.submit(VALIDATORS[0], [send_from_gov(free + 1)])
        exact = chain.submit(VALIDATORS[1], [send_from_gov(free)])
        later = chain.submit(VALIDATORS[2], [epochs_update()])  # its deposit is held while the two execute
        for pid in (too_much, exact, later):
            all_vote(chain, pid)
        response = chain.tick((chain.proposal(later).voting_end_time.ToNanoseconds() - chain.now) // SECOND)
        assert results(response) == {too_much: "proposal_failed", exact: "proposal_passed", later: "proposal_passed"}
        assert chain.proposal(too_much).failed_reason == (
            f"message 0 (/cosmos.bank.v1beta1.MsgSend): spendable balance {free}{DENOM} is smaller than "
            f"{free + 1}{DENOM}: insufficient funds"
        )
        assert chain.balance(addr(OUTSIDER)) == before + free
        assert (chain.balance(GOV_ACCOUNT), chain.balance(DEPOSITS)) == (0, 0)
        assert chain.epochs_params() == NEW_EPOCHS


def test_a_proposal_may_not_submit_a_proposal(chain: GovChain) -> None:
    pid = chain.submit(VALIDATORS[0], [epochs_update()])
    snapshot = chain.gov_state()
    balances = {addr(k): chain.balance(addr(k)) for k in [*VALIDATORS, OUTSIDER]}
    nested = submit_msg(VALIDATORS[0], [epochs_update()])
    nested.proposer = AUTHORITY  # signed by the gov authority, so the signer check alone would let it through
    account = chain.account(addr(OUTSIDER))
    assert account is not None
    raw = sign_tx(
        OUTSIDER, [submit_msg(OUTSIDER, [nested])], CHAIN, account.account_number, account.sequence, gas_limit=5_000_000
    )
    checked = chain.check(raw)
    assert (checked.codespace, checked.code) == ("gov", 12), checked.log
    assert checked.log == (
        "message 0 (/cosmos.gov.v1.MsgSubmitProposal): a proposal may not submit proposals: invalid proposal message"
    )
    result = chain.tick(1, [raw]).tx_results[0]
    assert (result.codespace, result.code, result.log) == ("gov", 12, checked.log)
    assert chain.gov_state() == snapshot
    assert {addr(k): chain.balance(addr(k)) for k in [*VALIDATORS, OUTSIDER]} == balances
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD


def test_one_failing_proposal_does_not_stop_the_others(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # the escrow is made short on purpose below, which gov/deposits-held rightly reports: checked by hand here
    with GovChain(tmp_path / "db", check_invariants=False) as chain:
        before = {addr(k): chain.balance(addr(k)) for k in VALIDATORS}
        gov_params = chain.app.gov_keeper.get_params(chain.context())
        gov_params.voting_period.CopyFrom(Duration(seconds=30))
        a = chain.submit(
            VALIDATORS[0], [gov_tx.MsgUpdateParams(authority=AUTHORITY, params=gov_params)], deposit=3 * MIN_DEPOSIT
        )
        b = chain.submit(VALIDATORS[1], [epochs_update()])
        c = chain.submit(VALIDATORS[2], [epochs_update()])
        all_vote(chain, a)
        all_vote(chain, b)
        all_vote(chain, c, (NO,) * 4)
        assert chain.balance(DEPOSITS) == 5 * MIN_DEPOSIT

        def short(ctx: Context) -> None:
            """What only a broken keeper could do: take coins from the deposits account."""
            chain.app.bank_keeper.send_coins(ctx, DEPOSITS, THIEF, Coins(((DENOM, 2 * MIN_DEPOSIT + 1),)))

        chain.now = chain.proposal(c).voting_end_time.ToNanoseconds()  # a, b and c end in this block
        with caplog.at_level(logging.WARNING):
            response = chain.block(time_ns=chain.now, during=short)
        assert [r.getMessage() for r in caplog.records if "module gov" in r.getMessage()] == []
        assert results(response) == {a: "proposal_failed", b: "proposal_passed", c: "proposal_rejected"}
        failed = chain.proposal(a)
        assert failed.status == gov_pb2.PROPOSAL_STATUS_FAILED
        assert failed.failed_reason == (
            f"end block: spendable balance {3 * MIN_DEPOSIT - 1}{DENOM} is smaller than "
            f"{3 * MIN_DEPOSIT}{DENOM}: insufficient funds"
        )
        assert deposits_of(chain, a) == [(addr(VALIDATORS[0]), str(3 * MIN_DEPOSIT))]  # still owed
        assert votes_of(chain, a) == []
        assert chain.app.gov_keeper.get_params(chain.context()).voting_period.seconds == 60  # a did not apply
        assert chain.proposal(b).status == gov_pb2.PROPOSAL_STATUS_PASSED and chain.epochs_params() == NEW_EPOCHS
        assert chain.proposal(c).status == gov_pb2.PROPOSAL_STATUS_REJECTED
        assert {k: chain.balance(k) for k in before} == {
            **before,
            addr(VALIDATORS[0]): before[addr(VALIDATORS[0])] - 3 * MIN_DEPOSIT,
        }
        assert chain.balance(DEPOSITS) == MIN_DEPOSIT - 1
        assert queued(chain) == []
        assert chain.app.invariants["gov/deposits-held"](chain.context()) == (
            f"the deposits account holds {MIN_DEPOSIT - 1}{DENOM} but the deposits recorded are "
            f"{3 * MIN_DEPOSIT}{DENOM}"
        )
        # nothing is stuck: a later proposal goes through as usual, and a is not taken up again
        d = chain.submit(VALIDATORS[3], [epochs_update()])
        all_vote(chain, d)
        response = chain.tick(61)
        assert results(response) == {d: "proposal_passed"}
        assert chain.balance(addr(VALIDATORS[3])) == before[addr(VALIDATORS[3])]
        assert chain.proposal(a).failed_reason == failed.failed_reason


def test_a_failing_settlement_keeps_the_deposits_owed_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with GovChain(tmp_path / "db") as chain:  # every block's invariants checked
        vetoed = chain.submit(VALIDATORS[0], [epochs_update()])
        passing = chain.submit(VALIDATORS[1], [epochs_update()])
        all_vote(chain, vetoed, (YES, YES, VETO, VETO))
        all_vote(chain, passing)
        before = chain.balance(addr(VALIDATORS[1]))

        def pool_down(*args: object) -> None:
            raise RuntimeError("pool down")

        monkeypatch.setattr(chain.app.pool_keeper, "fund_from_module", pool_down)
        response = chain.tick((chain.proposal(passing).voting_end_time.ToNanoseconds() - chain.now) // SECOND)
        monkeypatch.undo()
        assert results(response) == {vetoed: "proposal_failed", passing: "proposal_passed"}
        failed = chain.proposal(vetoed)
        assert (failed.status, failed.failed_reason) == (
            gov_pb2.PROPOSAL_STATUS_FAILED,
            "end block: internal error: RuntimeError",
        )
        assert deposits_of(chain, vetoed) == [(addr(VALIDATORS[0]), str(MIN_DEPOSIT))]
        assert chain.balance(DEPOSITS) == MIN_DEPOSIT
        assert chain.balance(addr(VALIDATORS[1])) == before + MIN_DEPOSIT
        exported = json.loads(json.dumps(chain.app.export_app_state()))
        gov = exported["gov"]
        assert len(gov["deposits"]) == 1 and "votes" not in gov  # the failed proposal's votes went
        with InProcessChain(tmp_path / "copy", {}, chain_id=CHAIN, app_state=exported, first_block=False) as copy:
            copy.block(time_ns=chain.now + SECOND)
            assert copy.app.export_app_state()["gov"] == gov
            assert copy.balance(DEPOSITS) == MIN_DEPOSIT


def test_deposits_held_invariant(chain: GovChain) -> None:
    chain.submit(VALIDATORS[0], [epochs_update()])
    check = chain.app.invariants["gov/deposits-held"]
    ctx = chain.context()
    assert check(ctx) is None
    chain.app.bank_keeper.send_coins(ctx, bech32.decode(addr(OUTSIDER)), DEPOSITS, Coins(((DENOM, 1),)))
    assert check(ctx) is None  # more than owed is no harm
    chain.app.bank_keeper.send_coins(ctx, DEPOSITS, THIEF, Coins(((DENOM, 2),)))
    assert check(ctx) == (
        f"the deposits account holds {MIN_DEPOSIT - 1}{DENOM} but the deposits recorded are {MIN_DEPOSIT}{DENOM}"
    )
