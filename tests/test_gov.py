"""x/gov in process: four gentx validators of equal power (1,000 each), the default authority (gov's module
account), block times set by each block (``block(time_ns=…)``), every block's invariants checked
(``gov/deposits-held`` among them).

Outcomes with exact deposits: pass (refund, the epochs params change), reject (refund), veto and missed quorum
(burned, or to the community pool when x/pool says so), weighted votes (exact counts), a failing second message
(FAILED, nothing of the first applies, failed_reason recorded); bad input changes nothing; the deposit period
running out; queries, genesis export and import.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Unpack

import pytest
from chain import AppOptions, InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from cosmpy.protos.cosmos.gov.v1beta1 import gov_pb2 as legacy_gov
from cosmpy.protos.cosmos.gov.v1beta1 import query_pb2 as legacy_query
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message

from gonkad import genesis
from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.epochs.v1 import tx_pb2 as epochs_tx
from sdk.address import module_address
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, secp256k1
from sdk.errors import ABCIError, ErrUnknownRequest
from sdk.params import GOV_AUTHORITY
from x.genutil.gentx import build_gentx
from x.gov import keys as gov_keys

CHAIN = "gonka-gov"
DENOM = "ngonka"
VALIDATORS = [secp256k1.PrivateKey(bytes([0x60 + i]) * 32) for i in range(4)]
OUTSIDER = secp256k1.PrivateKey(bytes([0x6F]) * 32)
FUNDS, STAKE = 10_000 * 10**9, 1_000 * 10**9
POWER = STAKE // 10**9  # 1,000 each, 4,000 in all
MIN_DEPOSIT = 1_000 * 10**6
SECOND = 10**9
DEPOSIT_PERIOD, VOTING_PERIOD = 100 * SECOND, 60 * SECOND
EXPEDITED_DEPOSIT, EXPEDITED_PERIOD = 5 * MIN_DEPOSIT, 20 * SECOND
AUTHORITY = bech32.encode(GOV_AUTHORITY)
GOV_ACCOUNT = GOV_AUTHORITY
DEPOSITS_ACCOUNT = module_address("gov_deposits")
POOL = module_address("pool")
YES, NO, ABSTAIN, VETO = (
    gov_pb2.VOTE_OPTION_YES,
    gov_pb2.VOTE_OPTION_NO,
    gov_pb2.VOTE_OPTION_ABSTAIN,
    gov_pb2.VOTE_OPTION_NO_WITH_VETO,
)
NEW_EPOCHS = epochs_pb2.Params(epoch_length=50, race_validation_offset=5, set_validators_offset=10, inference_offset=11)


def addr(key: secp256k1.PrivateKey) -> str:
    return address_of(key)


class GovChain(InProcessChain):
    """Four validators by gentx, an outsider with funds, short gov periods; ``now`` is the last block time."""

    def __init__(
        self,
        path: Path,
        pool_takes_burns: bool = True,
        extra_accounts: dict[str, list[tuple[str, int]]] | None = None,
        gov_params: dict[str, str] | None = None,
        **options: Unpack[AppOptions],
    ) -> None:
        """``extra_accounts``: more genesis balances (e.g. free coins of the gov account); ``gov_params``: more
        genesis gov params; ``options``: the app's (``check_invariants=False`` for a test that breaks one on
        purpose)."""
        state = genesis.default_app_state()
        state["genutil"] = {
            "gen_txs": [
                base64.b64encode(build_gentx(key, f"v{i}", bytes([i + 1]) * 32, (DENOM, STAKE), CHAIN)).decode()
                for i, key in enumerate(VALIDATORS)
            ]
        }
        params = state["gov"]["params"]
        params.update(
            min_deposit=[{"denom": DENOM, "amount": str(MIN_DEPOSIT)}],
            max_deposit_period=f"{DEPOSIT_PERIOD // SECOND}s",
            voting_period=f"{VOTING_PERIOD // SECOND}s",
            expedited_min_deposit=[{"denom": DENOM, "amount": str(EXPEDITED_DEPOSIT)}],
            expedited_voting_period=f"{EXPEDITED_PERIOD // SECOND}s",
        )
        params.update(gov_params or {})
        if "pool" in state:
            state["pool"].setdefault("params", {})["burned_deposits_to_pool"] = pool_takes_burns
        funded = {addr(k): [(DENOM, FUNDS), ("uother", 10**9)] for k in [*VALIDATORS, OUTSIDER]}
        funded.update(extra_accounts or {})
        self.now = 1_000 * SECOND
        super().__init__(path, funded, chain_id=CHAIN, app_state=state, first_block=False, **options)
        self.block(time_ns=self.now)

    def tick(self, seconds: int = 1, txs: list[bytes] | None = None) -> abci.ResponseFinalizeBlock:
        self.now += seconds * SECOND
        return self.block(txs or [], time_ns=self.now)

    def deliver(self, key: secp256k1.PrivateKey, *msgs: Message, seconds: int = 1) -> abci.ExecTxResult:
        account = self.account(addr(key))
        assert account is not None
        raw = sign_tx(key, list(msgs), CHAIN, account.account_number, account.sequence, gas_limit=5_000_000)
        return self.tick(seconds, [raw]).tx_results[0]

    def ok(self, key: secp256k1.PrivateKey, *msgs: Message) -> abci.ExecTxResult:
        result = self.deliver(key, *msgs)
        assert result.code == 0, result.log
        return result

    def submit(
        self, key: secp256k1.PrivateKey, messages: list[Message], deposit: int = MIN_DEPOSIT, denom: str = DENOM
    ) -> int:
        result = self.ok(key, submit_msg(key, messages, deposit, denom))
        data = abci_types.TxMsgData.FromString(result.data)
        reply = gov_tx.MsgSubmitProposalResponse()
        data.msg_responses[0].Unpack(reply)
        return reply.proposal_id

    def vote(self, key: secp256k1.PrivateKey, pid: int, option: int) -> abci.ExecTxResult:
        return self.deliver(key, gov_tx.MsgVote(proposal_id=pid, voter=addr(key), option=option))

    def proposal(self, pid: int) -> gov_pb2.Proposal:
        return self.query(
            "/cosmos.gov.v1.Query/Proposal",
            gov_query.QueryProposalRequest(proposal_id=pid),
            gov_query.QueryProposalResponse,
        ).proposal

    def tally(self, pid: int) -> gov_pb2.TallyResult:
        return self.query(
            "/cosmos.gov.v1.Query/TallyResult",
            gov_query.QueryTallyResultRequest(proposal_id=pid),
            gov_query.QueryTallyResultResponse,
        ).tally

    def end_voting(self) -> None:
        """Past the voting period of anything submitted so far (one block, then one more for safety)."""
        self.tick(VOTING_PERIOD // SECOND + 1)

    def epochs_params(self) -> epochs_pb2.Params:
        return self.app.epochs_keeper.get_params(self.context())

    def gov_state(self) -> dict[bytes, bytes]:
        return dict(self.app.store.iterate(gov_keys.STORE_PREFIX))


def submit_msg(
    key: secp256k1.PrivateKey, messages: list[Message], deposit: int = MIN_DEPOSIT, denom: str = DENOM
) -> gov_tx.MsgSubmitProposal:
    packed = []
    for m in messages:
        a = AnyPb()
        a.Pack(m, type_url_prefix="/")
        packed.append(a)
    return gov_tx.MsgSubmitProposal(
        messages=packed,
        proposer=addr(key),
        title="t",
        summary="s",
        initial_deposit=[coin_pb2.Coin(denom=denom, amount=str(deposit))] if deposit else [],
    )


def epochs_update() -> epochs_tx.MsgUpdateParams:
    return epochs_tx.MsgUpdateParams(authority=AUTHORITY, params=NEW_EPOCHS)


def authority_send(amount: int) -> bank_tx.MsgSend:
    return bank_tx.MsgSend(
        from_address=AUTHORITY, to_address=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount=str(amount))]
    )


@pytest.fixture
def chain(tmp_path: Path):  # type: ignore[no-untyped-def]
    with GovChain(tmp_path / "db") as c:
        yield c


def test_validators_have_power(chain: GovChain) -> None:
    powers = chain.app.stake_keeper.validator_powers(chain.context())
    assert sorted(powers.values()) == [POWER] * 4


def test_passed_proposal_changes_epoch_params_and_refunds(chain: GovChain) -> None:
    proposer = VALIDATORS[0]
    before = chain.balance(addr(proposer))
    pid = chain.submit(proposer, [epochs_update()])
    assert pid == 1
    proposal = chain.proposal(pid)
    assert proposal.status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD
    assert chain.balance(addr(proposer)) == before - MIN_DEPOSIT
    assert (chain.balance(DEPOSITS_ACCOUNT), chain.balance(GOV_ACCOUNT)) == (MIN_DEPOSIT, 0)
    deposits_account = chain.app.account_keeper.get_module_account(chain.context(), "gov_deposits")
    assert deposits_account is not None and list(deposits_account.permissions) == ["burner"]
    for key in VALIDATORS[:3]:
        assert chain.vote(key, pid, YES).code == 0
    live = chain.tally(pid)
    assert (live.yes_count, live.no_count) == (str(3 * POWER), "0")
    assert chain.epochs_params() != NEW_EPOCHS
    chain.end_voting()
    done = chain.proposal(pid)
    assert done.status == gov_pb2.PROPOSAL_STATUS_PASSED, done.failed_reason
    assert done.final_tally_result.yes_count == str(3 * POWER)
    assert chain.tally(pid) == done.final_tally_result
    assert chain.epochs_params() == NEW_EPOCHS
    assert chain.balance(addr(proposer)) == before
    assert (chain.balance(DEPOSITS_ACCOUNT), chain.balance(GOV_ACCOUNT)) == (0, 0)
    # the next proposal takes the next id
    assert chain.submit(proposer, [epochs_update()]) == 2


def test_rejected_proposal_refunds(chain: GovChain) -> None:
    before = chain.balance(addr(VALIDATORS[1]))
    pid = chain.submit(VALIDATORS[1], [epochs_update()])
    chain.vote(VALIDATORS[0], pid, YES)
    chain.vote(VALIDATORS[1], pid, NO)
    chain.vote(VALIDATORS[2], pid, NO)
    chain.end_voting()
    done = chain.proposal(pid)
    assert done.status == gov_pb2.PROPOSAL_STATUS_REJECTED
    assert (done.final_tally_result.yes_count, done.final_tally_result.no_count) == (str(POWER), str(2 * POWER))
    assert chain.balance(addr(VALIDATORS[1])) == before
    assert chain.epochs_params() != NEW_EPOCHS


@pytest.mark.parametrize("to_pool", [True, False], ids=["to-pool", "burned"])
@pytest.mark.parametrize("outcome", ["veto", "no-quorum"])
def test_veto_and_missed_quorum_burn_the_deposit(tmp_path: Path, outcome: str, to_pool: bool) -> None:
    with GovChain(tmp_path / "db", pool_takes_burns=to_pool) as chain:
        proposer = VALIDATORS[3]
        before, supply = chain.balance(addr(proposer)), chain.supply()
        pool_before = chain.balance(POOL)
        pid = chain.submit(proposer, [epochs_update()])
        extra = MIN_DEPOSIT // 10  # a second depositor's deposit goes the same way
        assert (
            chain.deliver(
                OUTSIDER,
                gov_tx.MsgDeposit(
                    proposal_id=pid, depositor=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount=str(extra))]
                ),
            ).code
            == 0
        )
        if outcome == "veto":  # 2 of 4 veto: 0.5 of the votes cast > 0.334
            for key, option in zip(VALIDATORS, (YES, YES, VETO, VETO)):
                chain.vote(key, pid, option)
        else:  # 1 of 4 votes: 0.25 < 0.334
            chain.vote(VALIDATORS[0], pid, YES)
        chain.end_voting()
        done = chain.proposal(pid)
        assert done.status == gov_pb2.PROPOSAL_STATUS_REJECTED
        assert chain.balance(addr(proposer)) == before - MIN_DEPOSIT
        assert (chain.balance(DEPOSITS_ACCOUNT), chain.balance(GOV_ACCOUNT)) == (0, 0)
        lost = MIN_DEPOSIT + extra
        if to_pool:
            assert chain.supply() == supply and chain.balance(POOL) == pool_before + lost
        else:
            assert chain.supply() == supply - lost and chain.balance(POOL) == pool_before
        assert chain.epochs_params() != NEW_EPOCHS


def test_weighted_votes_count_exactly(chain: GovChain) -> None:
    pid = chain.submit(VALIDATORS[0], [epochs_update()])
    W = gov_pb2.WeightedVoteOption
    splits = [
        [W(option=YES, weight="0.6"), W(option=NO, weight="0.4")],
        [W(option=YES, weight="0.333333333333333333"), W(option=ABSTAIN, weight="0.666666666666666667")],
        [W(option=VETO, weight="0.25"), W(option=NO, weight="0.75")],
    ]
    for key, options in zip(VALIDATORS, splits):
        result = chain.deliver(key, gov_tx.MsgVoteWeighted(proposal_id=pid, voter=addr(key), options=options))
        assert result.code == 0, result.log
    # weights that do not sum to 1, or an option twice, are refused
    bad = chain.deliver(
        VALIDATORS[3],
        gov_tx.MsgVoteWeighted(
            proposal_id=pid,
            voter=addr(VALIDATORS[3]),
            options=[W(option=YES, weight="0.5"), W(option=NO, weight="0.4")],
        ),
    )
    assert (bad.codespace, bad.code) == ("gov", 7), bad.log
    twice = chain.deliver(
        VALIDATORS[3],
        gov_tx.MsgVoteWeighted(
            proposal_id=pid,
            voter=addr(VALIDATORS[3]),
            options=[W(option=YES, weight="0.5"), W(option=YES, weight="0.5")],
        ),
    )
    assert (twice.codespace, twice.code) == ("gov", 7), twice.log
    live = chain.tally(pid)
    # yes 600 + 333.333…; abstain 666.666…; no 400 + 750; veto 250 (whole parts)
    assert (live.yes_count, live.abstain_count, live.no_count, live.no_with_veto_count) == ("933", "666", "1150", "250")
    chain.end_voting()
    done = chain.proposal(pid)
    # quorum 3/4; veto 250/3000 < 0.334; yes 933.33/(3000 - 666.67) = 0.4 → rejected
    assert done.status == gov_pb2.PROPOSAL_STATUS_REJECTED
    assert done.final_tally_result == live


def test_failing_second_message_fails_the_proposal_atomically(chain: GovChain) -> None:
    proposer = VALIDATORS[0]
    before = chain.balance(addr(proposer))
    pid = chain.submit(proposer, [epochs_update(), authority_send(10**18)])
    for key in VALIDATORS:
        chain.vote(key, pid, YES)
    chain.end_voting()
    done = chain.proposal(pid)
    assert done.status == gov_pb2.PROPOSAL_STATUS_FAILED
    assert "message 1 (/cosmos.bank.v1beta1.MsgSend)" in done.failed_reason
    assert "insufficient funds" in done.failed_reason
    assert chain.epochs_params() != NEW_EPOCHS  # the first message's change did not land
    assert chain.balance(addr(proposer)) == before  # refunded, as on a plain rejection


def test_bad_input_changes_nothing(chain: GovChain) -> None:
    pid = chain.submit(VALIDATORS[0], [epochs_update()])
    snapshot = chain.gov_state()
    balances = {addr(k): chain.balance(addr(k)) for k in [*VALIDATORS, OUTSIDER]}

    # a message not signed by the authority: refused at CheckTx and in the block, nothing stored
    theft = bank_tx.MsgSend(
        from_address=addr(VALIDATORS[1]), to_address=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount="1")]
    )
    account = chain.account(addr(OUTSIDER))
    raw = sign_tx(
        OUTSIDER, [submit_msg(OUTSIDER, [theft])], CHAIN, account.account_number, account.sequence, gas_limit=5_000_000
    )
    checked = chain.check(raw)
    assert (checked.codespace, checked.code) == ("gov", 13), checked.log
    assert "must be signed by exactly the gov authority" in checked.log
    result = chain.tick(1, [raw]).tx_results[0]
    assert (result.codespace, result.code) == ("gov", 13)
    # an unknown message type
    unknown = AnyPb(type_url="/nowhere.MsgNothing", value=b"")
    msg = submit_msg(OUTSIDER, [])
    msg.messages.append(unknown)
    unroutable = chain.deliver(OUTSIDER, msg)
    assert (unroutable.codespace, unroutable.code) == ("gov", 10), unroutable.log
    # a vote from an account outside the validator set
    outsider = chain.vote(OUTSIDER, pid, YES)
    assert (outsider.codespace, outsider.code) == ("gov", 100), outsider.log
    assert "holds no power in the validator set" in outsider.log
    # a deposit in a denom the min deposit does not name
    wrong = chain.deliver(
        OUTSIDER,
        gov_tx.MsgDeposit(
            proposal_id=pid, depositor=addr(OUTSIDER), amount=[coin_pb2.Coin(denom="uother", amount="1000")]
        ),
    )
    assert (wrong.codespace, wrong.code) == ("gov", 23), wrong.log
    # a deposit on a proposal that does not exist
    missing = chain.deliver(
        OUTSIDER,
        gov_tx.MsgDeposit(
            proposal_id=99, depositor=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount=str(MIN_DEPOSIT))]
        ),
    )
    assert (missing.codespace, missing.code) == ("gov", 2), missing.log
    assert chain.gov_state() == snapshot
    assert {addr(k): chain.balance(addr(k)) for k in [*VALIDATORS, OUTSIDER]} == balances

    # a vote after the voting period
    chain.end_voting()
    late = chain.vote(VALIDATORS[0], pid, YES)
    assert (late.codespace, late.code) == ("gov", 20), late.log
    after = chain.gov_state()
    assert chain.vote(VALIDATORS[1], pid, NO).code == 20
    assert chain.gov_state() == after


def test_deposit_period_runs_out_and_refunds(chain: GovChain) -> None:
    proposer = VALIDATORS[2]
    before = chain.balance(addr(proposer))
    pid = chain.submit(proposer, [epochs_update()], deposit=MIN_DEPOSIT // 2)
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD
    early = chain.vote(VALIDATORS[0], pid, YES)
    assert (early.codespace, early.code) == ("gov", 3), early.log
    chain.tick(DEPOSIT_PERIOD // SECOND + 1)
    reply = chain.app.query(
        abci.RequestQuery(
            path="/cosmos.gov.v1.Query/Proposal",
            data=gov_query.QueryProposalRequest(proposal_id=pid).SerializeToString(),
        )
    )
    assert (reply.codespace, reply.code) == ("sdk", 38), reply.log  # removed: not found
    assert chain.balance(addr(proposer)) == before  # burn_proposal_deposit_prevote is off
    assert (chain.balance(DEPOSITS_ACCOUNT), chain.balance(GOV_ACCOUNT)) == (0, 0)


def test_second_deposit_opens_voting(chain: GovChain) -> None:
    pid = chain.submit(VALIDATORS[0], [epochs_update()], deposit=MIN_DEPOSIT // 2)
    tiny = chain.deliver(
        OUTSIDER,
        gov_tx.MsgDeposit(proposal_id=pid, depositor=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount="1")]),
    )
    assert (tiny.codespace, tiny.code) == ("gov", 16), tiny.log  # below min_deposit_ratio (1%)
    chain.ok(
        OUTSIDER,
        gov_tx.MsgDeposit(
            proposal_id=pid, depositor=addr(OUTSIDER), amount=[coin_pb2.Coin(denom=DENOM, amount=str(MIN_DEPOSIT // 2))]
        ),
    )
    proposal = chain.proposal(pid)
    assert proposal.status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD
    assert proposal.voting_end_time.ToNanoseconds() == chain.now + VOTING_PERIOD
    deposits = chain.query(
        "/cosmos.gov.v1.Query/Deposits",
        gov_query.QueryDepositsRequest(proposal_id=pid),
        gov_query.QueryDepositsResponse,
    ).deposits
    assert sorted((d.depositor, d.amount[0].amount) for d in deposits) == sorted(
        [(addr(VALIDATORS[0]), str(MIN_DEPOSIT // 2)), (addr(OUTSIDER), str(MIN_DEPOSIT // 2))]
    )


def test_queries_filter_and_paginate(chain: GovChain) -> None:
    ids = [chain.submit(VALIDATORS[0], [epochs_update()], deposit=d) for d in (MIN_DEPOSIT, 0, MIN_DEPOSIT)]
    chain.vote(VALIDATORS[1], ids[0], YES)
    path = "/cosmos.gov.v1.Query/Proposals"
    voting = chain.query(
        path,
        gov_query.QueryProposalsRequest(proposal_status=gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD),
        gov_query.QueryProposalsResponse,
    )
    assert [p.id for p in voting.proposals] == [ids[0], ids[2]]
    request = gov_query.QueryProposalsRequest()
    request.pagination.limit = 2
    request.pagination.count_total = True
    first = chain.query(path, request, gov_query.QueryProposalsResponse)
    assert [p.id for p in first.proposals] == ids[:2] and first.pagination.total == 3
    request = gov_query.QueryProposalsRequest()
    request.pagination.key = first.pagination.next_key
    second = chain.query(path, request, gov_query.QueryProposalsResponse)
    assert [p.id for p in second.proposals] == ids[2:]
    by_voter = chain.query(
        path, gov_query.QueryProposalsRequest(voter=addr(VALIDATORS[1])), gov_query.QueryProposalsResponse
    )
    assert [p.id for p in by_voter.proposals] == [ids[0]]
    vote = chain.query(
        "/cosmos.gov.v1.Query/Vote",
        gov_query.QueryVoteRequest(proposal_id=ids[0], voter=addr(VALIDATORS[1])),
        gov_query.QueryVoteResponse,
    ).vote
    assert [(o.option, o.weight) for o in vote.options] == [(YES, "1.000000000000000000")]
    params = chain.query(
        "/cosmos.gov.v1.Query/Params",
        gov_query.QueryParamsRequest(params_type="tallying"),
        gov_query.QueryParamsResponse,
    )
    assert (params.params.quorum, params.tally_params.veto_threshold) == (
        "0.334000000000000000",
        "0.334000000000000000",
    )


def test_v1beta1_queries_answer_the_v1_state_in_the_legacy_shape(chain: GovChain) -> None:
    """``cosmos.gov.v1beta1.Query`` (what CosmJS's gov extension reads): the v1 answers, converted as the SDK
    converts them."""
    voting, waiting = (
        chain.submit(VALIDATORS[0], [epochs_update()]),
        chain.submit(VALIDATORS[2], [authority_send(1)], deposit=0),
    )
    W = gov_pb2.WeightedVoteOption
    split = [W(option=YES, weight="0.6"), W(option=NO, weight="0.4")]
    chain.ok(VALIDATORS[1], gov_tx.MsgVoteWeighted(proposal_id=voting, voter=addr(VALIDATORS[1]), options=split))
    path = "/cosmos.gov.v1beta1.Query/"
    proposals = chain.query(
        path + "Proposals", legacy_query.QueryProposalsRequest(), legacy_query.QueryProposalsResponse
    )
    current = [chain.proposal(voting), chain.proposal(waiting)]
    assert [(p.proposal_id, p.status) for p in proposals.proposals] == [
        (voting, legacy_gov.PROPOSAL_STATUS_VOTING_PERIOD),
        (waiting, legacy_gov.PROPOSAL_STATUS_DEPOSIT_PERIOD),
    ]
    first, second = proposals.proposals
    assert first.content == current[0].messages[0] and second.content == current[1].messages[0]  # the first one
    assert first.total_deposit == current[0].total_deposit and first.voting_end_time == current[0].voting_end_time
    assert first.submit_time == current[0].submit_time and second.deposit_end_time == current[1].deposit_end_time
    one = chain.query(
        path + "Proposal", legacy_query.QueryProposalRequest(proposal_id=voting), legacy_query.QueryProposalResponse
    )
    assert one.proposal == first
    vote = chain.query(
        path + "Vote",
        legacy_query.QueryVoteRequest(proposal_id=voting, voter=addr(VALIDATORS[1])),
        legacy_query.QueryVoteResponse,
    ).vote
    assert [(o.option, o.weight) for o in vote.options] == [(YES, "600000000000000000"), (NO, "400000000000000000")]
    votes = chain.query(
        path + "Votes", legacy_query.QueryVotesRequest(proposal_id=voting), legacy_query.QueryVotesResponse
    )
    assert list(votes.votes) == [vote]
    deposits = chain.query(
        path + "Deposits", legacy_query.QueryDepositsRequest(proposal_id=voting), legacy_query.QueryDepositsResponse
    )
    assert [(d.depositor, d.amount[0].amount) for d in deposits.deposits] == [(addr(VALIDATORS[0]), str(MIN_DEPOSIT))]
    tally = chain.query(
        path + "TallyResult",
        legacy_query.QueryTallyResultRequest(proposal_id=voting),
        legacy_query.QueryTallyResultResponse,
    ).tally
    assert (tally.yes, tally.no, tally.abstain, tally.no_with_veto) == ("600", "400", "0", "0")
    tallying = chain.query(
        path + "Params", legacy_query.QueryParamsRequest(params_type="tallying"), legacy_query.QueryParamsResponse
    ).tally_params
    assert (tallying.quorum, tallying.threshold) == (b"334000000000000000", b"500000000000000000")
    voting_params = chain.query(
        path + "Params", legacy_query.QueryParamsRequest(params_type="voting"), legacy_query.QueryParamsResponse
    ).voting_params
    assert voting_params.voting_period.seconds == VOTING_PERIOD // SECOND
    for request, code, words in (
        (("Params", legacy_query.QueryParamsRequest()), 18, "params_type is required"),
        (("Proposal", legacy_query.QueryProposalRequest(proposal_id=99)), 38, "proposal 99 doesn't exist"),
    ):
        name, message = request
        reply = chain.app.query(abci.RequestQuery(path=path + name, data=message.SerializeToString()))
        assert (reply.codespace, reply.code) == ("sdk", code) and words in reply.log, reply.log


def test_update_params_by_proposal_and_refused_from_others(chain: GovChain) -> None:
    params = chain.app.gov_keeper.get_params(chain.context())
    params.voting_period.CopyFrom(Duration(seconds=30))
    direct = chain.deliver(VALIDATORS[0], gov_tx.MsgUpdateParams(authority=addr(VALIDATORS[0]), params=params))
    assert (direct.codespace, direct.code) == ("gov", 13)
    pid = chain.submit(VALIDATORS[0], [gov_tx.MsgUpdateParams(authority=AUTHORITY, params=params)])
    for key in VALIDATORS:
        chain.vote(key, pid, YES)
    chain.end_voting()
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_PASSED
    assert chain.app.gov_keeper.get_params(chain.context()).voting_period.seconds == 30


def test_genesis_export_and_import_mid_vote(tmp_path: Path, chain: GovChain) -> None:
    pid = chain.submit(VALIDATORS[0], [epochs_update()])
    chain.vote(VALIDATORS[0], pid, YES)
    chain.vote(VALIDATORS[1], pid, YES)
    dropped = chain.submit(VALIDATORS[1], [epochs_update()], deposit=MIN_DEPOSIT // 2)
    exported = json.loads(json.dumps(chain.app.export_app_state()))
    gov = exported["gov"]
    assert gov["starting_proposal_id"] == "3" and len(gov["proposals"]) == 2 and len(gov["votes"]) == 2
    assert len(gov["deposits"]) == 2
    with InProcessChain(tmp_path / "copy", {}, chain_id=CHAIN, app_state=exported, first_block=False) as copy:
        copy.block(time_ns=chain.now + SECOND)
        assert copy.app.export_app_state()["gov"] == gov
        copy.block(time_ns=chain.now + VOTING_PERIOD + SECOND)  # 2 of 4 yes: quorum, passes
        reply = copy.query(
            "/cosmos.gov.v1.Query/Proposal",
            gov_query.QueryProposalRequest(proposal_id=pid),
            gov_query.QueryProposalResponse,
        )
        assert reply.proposal.status == gov_pb2.PROPOSAL_STATUS_PASSED
        assert copy.app.epochs_keeper.get_params(copy.context()) == NEW_EPOCHS
    assert dropped == 2


def test_router_checks_and_executes_packed_messages_atomically(chain: GovChain) -> None:
    app = chain.app
    good, theft = AnyPb(), AnyPb()
    good.Pack(epochs_update(), type_url_prefix="/")
    theft.Pack(
        bank_tx.MsgSend(
            from_address=addr(OUTSIDER), to_address=AUTHORITY, amount=[coin_pb2.Coin(denom=DENOM, amount="1")]
        ),
        type_url_prefix="/",
    )
    assert app.packed_signers(good) == [GOV_AUTHORITY]
    with pytest.raises(ABCIError) as unknown:
        app.packed_signers(AnyPb(type_url="/nowhere.Msg"))
    assert unknown.value.kind is ErrUnknownRequest
    ctx = chain.context()
    with pytest.raises(ABCIError) as refused:
        app.execute_packed(ctx, GOV_AUTHORITY, [good, theft])
    assert "message 1 (/cosmos.bank.v1beta1.MsgSend)" in refused.value.log
    assert app.epochs_keeper.get_params(ctx) != NEW_EPOCHS  # the first message's write was dropped
    responses = app.execute_packed(ctx, GOV_AUTHORITY, [good])
    assert len(responses) == 1 and app.epochs_keeper.get_params(ctx) == NEW_EPOCHS


def gonkad_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gonkad", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "is not JSON"),
        ('{"messages": {}}', "must be a list"),
        ('{"messages": [], "expedited": "yes"}', '"expedited" must be true or false'),
        ('{"messages": [{"authority": "x"}]}', "@type"),
        ('{"messages": [{"@type": "/gonka.epochs.v1.MsgUpdateParams", "nope": 1}]}', "messages[0]"),
        ('{"messages": [{"@type": "/gonka.epochs.v1.MsgUpdateParams"}], "deposit": "ten"}', "malformed amount"),
        ('{"messages": [{"@type": "/gonka.epochs.v1.MsgUpdateParams"}], "colour": "red"}', "unknown fields colour"),
    ],
    ids=["not-json", "messages-not-a-list", "bad-expedited", "no-type", "bad-field", "bad-deposit", "unknown-key"],
)
def test_cli_malformed_proposal_file_is_one_error_line(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "proposal.json"
    path.write_text(content)
    done = gonkad_cli(
        "tx",
        "gov",
        "submit-proposal",
        str(path),
        "--from",
        "nobody",
        "--home",
        str(tmp_path),
        "--keyring-backend",
        "test",
        "--node",
        "tcp://127.0.0.1:1",
        "-y",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_cli_draft_proposal_writes_a_submittable_template(tmp_path: Path) -> None:
    done = gonkad_cli("tx", "gov", "draft-proposal", "--title", "t", "--summary", "s", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    draft = json.loads((tmp_path / "draft_proposal.json").read_text())
    assert draft["messages"][0]["@type"] == "/gonka.epochs.v1.MsgUpdateParams"
    assert draft["messages"][0]["authority"] == AUTHORITY and set(draft) == {
        "messages",
        "metadata",
        "deposit",
        "title",
        "summary",
    }
