"""x/gov's Cosmos SDK v0.50 features: text proposals, expedited proposals, MsgCancelProposal, the params'
rules for them, and the ``cosmos.gov.v1beta1`` query service (over ABCI query and over gRPC).

Same chain as ``test_gov.py``: four validators of power 1,000, min deposit 1,000,000,000 (expedited: five
times that), 60 s of voting (expedited: 20 s), threshold 0.5 (expedited: 0.667), cancel ratio 0.5.
"""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest
from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from cosmpy.protos.cosmos.gov.v1beta1 import gov_pb2 as legacy
from cosmpy.protos.cosmos.gov.v1beta1 import query_pb2 as legacy_query
from cosmpy.protos.cosmos.gov.v1beta1 import query_pb2_grpc as legacy_grpc
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf import json_format
from google.protobuf.message import Message
from test_gov import (
    DENOM,
    EXPEDITED_DEPOSIT,
    EXPEDITED_PERIOD,
    MIN_DEPOSIT,
    NEW_EPOCHS,
    NO,
    OUTSIDER,
    POOL,
    SECOND,
    VALIDATORS,
    VOTING_PERIOD,
    YES,
    GovChain,
    addr,
    epochs_update,
    submit_msg,
)
from test_gov import DEPOSITS_ACCOUNT as DEPOSITS
from test_gov_deposits import all_vote, coins, results, votes_of
from test_grpc_app import over_grpc

from sdk.crypto import bech32
from sdk.crypto.secp256k1 import PrivateKey
from x.gov import keys as gov_keys
from x.gov.cli import read_proposal
from x.gov.params import default_params, validate_params

LEGACY = "/cosmos.gov.v1beta1.Query/"
RECEIVER = bech32.encode(bytes([0x55]) * 20)


@pytest.fixture
def chain(tmp_path: Path):  # type: ignore[no-untyped-def]
    with GovChain(tmp_path / "db", pool_takes_burns=False) as c:
        yield c


def submit(
    chain: GovChain, key: PrivateKey, messages: list[Message], deposit: int = MIN_DEPOSIT, expedited: bool = False
) -> int:
    msg = submit_msg(key, messages, deposit)
    msg.expedited = expedited
    result = chain.ok(key, msg)
    found = [e for e in result.events if e.type == "submit_proposal"]
    return int({a.key: a.value for a in found[0].attributes}["proposal_id"])


def events(response: abci.ResponseFinalizeBlock | abci.ExecTxResult, kind: str) -> list[dict[str, str]]:
    return [{a.key: a.value for a in e.attributes} for e in response.events if e.type == kind]


def until(chain: GovChain, end_ns: int) -> abci.ResponseFinalizeBlock:
    """The block at exactly ``end_ns`` (whose end block takes every period ending then)."""
    chain.now = end_ns
    return chain.block(time_ns=end_ns)


def test_text_proposal_passes_and_executes_nothing(chain: GovChain) -> None:
    proposer = VALIDATORS[0]
    before, supply = chain.balance(addr(proposer)), chain.supply()
    epochs = chain.epochs_params()
    pid = submit(chain, proposer, [])
    proposal = chain.proposal(pid)
    assert (proposal.status, list(proposal.messages)) == (gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD, [])
    all_vote(chain, pid, (YES, YES, YES, NO))
    done = until(chain, proposal.voting_end_time.ToNanoseconds())
    assert results(done) == {pid: "proposal_passed"}
    assert [e for e in done.events if e.type == "message"] == []  # nothing ran
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_PASSED
    assert chain.proposal(pid).final_tally_result.yes_count == "3000"
    assert chain.epochs_params() == epochs
    assert (chain.balance(addr(proposer)), chain.supply(), chain.balance(DEPOSITS)) == (before, supply, 0)


def test_text_proposal_fails(chain: GovChain) -> None:
    pid = submit(chain, VALIDATORS[1], [])
    all_vote(chain, pid, (YES, NO, NO, NO))
    chain.end_voting()
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_REJECTED


def test_expedited_proposal_needs_its_deposit_and_passes_fast(chain: GovChain) -> None:
    short = submit(chain, VALIDATORS[0], [epochs_update()], deposit=MIN_DEPOSIT, expedited=True)
    assert chain.proposal(short).status == gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD  # the regular deposit is not enough
    pid = submit(chain, VALIDATORS[0], [epochs_update()], deposit=EXPEDITED_DEPOSIT, expedited=True)
    proposal = chain.proposal(pid)
    assert proposal.expedited and proposal.status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD
    start, end = proposal.voting_start_time.ToNanoseconds(), proposal.voting_end_time.ToNanoseconds()
    assert end - start == EXPEDITED_PERIOD
    all_vote(chain, pid, (YES, YES, YES, NO))  # 0.75 > 0.667
    done = until(chain, end)
    assert results(done) == {pid: "proposal_passed"}
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_PASSED
    assert chain.epochs_params() == NEW_EPOCHS
    assert chain.now < start + VOTING_PERIOD


def test_failed_expedited_proposal_becomes_regular_then_is_decided(chain: GovChain) -> None:
    proposer = VALIDATORS[2]
    before = chain.balance(addr(proposer))
    pid = submit(chain, proposer, [epochs_update()], deposit=EXPEDITED_DEPOSIT, expedited=True)
    start = chain.proposal(pid).voting_start_time.ToNanoseconds()
    all_vote(chain, pid, (YES, YES, NO, NO))  # 0.5: not above 0.667, nor above the regular 0.5
    converted = until(chain, start + EXPEDITED_PERIOD)
    assert results(converted) == {pid: "expedited_proposal_rejected"}
    assert events(converted, "active_proposal")[0]["deposits"] == "kept"
    proposal = chain.proposal(pid)
    assert proposal.status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD and not proposal.expedited
    assert proposal.voting_end_time.ToNanoseconds() == start + VOTING_PERIOD
    assert proposal.final_tally_result.yes_count == "2000"
    assert votes_of(chain, pid) == []  # voting starts again, as in the SDK
    assert chain.balance(DEPOSITS) == EXPEDITED_DEPOSIT
    assert chain.epochs_params() != NEW_EPOCHS
    all_vote(chain, pid, (YES, YES, NO))  # 2 of 3: above the regular 0.5
    decided = until(chain, start + VOTING_PERIOD)
    assert results(decided) == {pid: "proposal_passed"}
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_PASSED
    assert chain.epochs_params() == NEW_EPOCHS
    assert (chain.balance(addr(proposer)), chain.balance(DEPOSITS)) == (before, 0)


def cancel(chain: GovChain, key: PrivateKey, pid: int) -> abci.ExecTxResult:
    return chain.deliver(key, gov_tx.MsgCancelProposal(proposal_id=pid, proposer=addr(key)))


@pytest.mark.parametrize("dest", ["", "account", "pool"])
def test_cancel_refunds_and_charges_exact_amounts(tmp_path: Path, dest: str) -> None:
    target_text = {"": "", "account": RECEIVER, "pool": bech32.encode(POOL)}[dest]
    with GovChain(tmp_path / "db", pool_takes_burns=False, gov_params={"proposal_cancel_dest": target_text}) as chain:
        proposer, other = VALIDATORS[0], OUTSIDER
        first, second = MIN_DEPOSIT + 1, MIN_DEPOSIT // 100 + 1  # odd: each charge rounds down
        before = {k: chain.balance(addr(k)) for k in (proposer, other)}
        supply, pool = chain.supply(), chain.balance(POOL)
        pid = submit(chain, proposer, [epochs_update()], deposit=first)
        chain.ok(other, gov_tx.MsgDeposit(proposal_id=pid, depositor=addr(other), amount=coins(second)))
        all_vote(chain, pid, (YES, NO))
        result = cancel(chain, proposer, pid)
        assert result.code == 0, result.log
        charged = first // 2 + second // 2
        assert chain.balance(addr(proposer)) == before[proposer] - first // 2
        assert chain.balance(addr(other)) == before[other] - second // 2
        assert chain.balance(DEPOSITS) == 0
        if dest == "":
            assert chain.supply() == supply - charged
        else:
            assert chain.supply() == supply
            assert chain.balance(target_text) == (pool if dest == "pool" else 0) + charged
        assert events(result, "cancel_proposal") == [
            {
                "proposal_id": str(pid),
                "proposer": addr(proposer),
                "charged": f"{charged}{DENOM}",
                "charges": {"": "burned", "account": "paid", "pool": "to_community_pool"}[dest],
            }
        ]
        reply = gov_tx.MsgCancelProposalResponse()
        abci_pb2.TxMsgData.FromString(result.data).msg_responses[0].Unpack(reply)
        assert (reply.proposal_id, reply.canceled_time.ToNanoseconds()) == (pid, chain.now)
        left = {k[len(gov_keys.STORE_PREFIX) :][:1] for k in chain.gov_state()}
        assert left == {gov_keys.NEXT_PROPOSAL_ID_KEY, gov_keys.PARAMS_KEY}  # no proposal, queue, deposit or vote
        gone = chain.app.query(
            abci.RequestQuery(
                path=LEGACY + "Proposal",
                data=legacy_query.QueryProposalRequest(proposal_id=pid).SerializeToString(),
            )
        )
        assert gone.code != 0 and "doesn't exist" in gone.log
        chain.tick(VOTING_PERIOD // SECOND + 1)  # nothing is left to end


def test_cancel_is_refused_to_others_and_after_voting(chain: GovChain) -> None:
    pid = submit(chain, VALIDATORS[0], [epochs_update()])
    snapshot = chain.gov_state()
    other = cancel(chain, VALIDATORS[1], pid)
    assert (other.codespace, other.code) == ("gov", 18), other.log
    unknown = cancel(chain, VALIDATORS[0], 99)
    assert (unknown.codespace, unknown.code) == ("gov", 2), unknown.log
    assert chain.gov_state() == snapshot
    chain.now = chain.proposal(pid).voting_end_time.ToNanoseconds() - SECOND
    at_end = cancel(chain, VALIDATORS[0], pid)  # the block at the end time: voting has ended
    assert (at_end.codespace, at_end.code) == ("gov", 20), at_end.log
    late = cancel(chain, VALIDATORS[0], pid)  # tallied: no longer in deposit or voting
    assert (late.codespace, late.code) == ("gov", 21), late.log
    assert chain.proposal(pid).status == gov_pb2.PROPOSAL_STATUS_REJECTED


def test_v1beta1_queries_answer_in_their_shape(chain: GovChain) -> None:
    text = submit(chain, VALIDATORS[0], [])
    change = submit(chain, VALIDATORS[1], [epochs_update()])
    W = gov_pb2.WeightedVoteOption
    chain.ok(
        VALIDATORS[0],
        gov_tx.MsgVoteWeighted(
            proposal_id=text,
            voter=addr(VALIDATORS[0]),
            options=[W(option=YES, weight="0.6"), W(option=NO, weight="0.4")],
        ),
    )
    q = legacy_query
    got = chain.query(LEGACY + "Proposal", q.QueryProposalRequest(proposal_id=text), q.QueryProposalResponse)
    proposal = got.proposal
    assert proposal.content.type_url == "/cosmos.gov.v1beta1.TextProposal"
    assert legacy.TextProposal.FromString(proposal.content.value) == legacy.TextProposal(title="t", description="s")
    assert (proposal.proposal_id, proposal.status) == (text, legacy.PROPOSAL_STATUS_VOTING_PERIOD)
    assert proposal.voting_end_time == chain.proposal(text).voting_end_time
    assert [(c.denom, c.amount) for c in proposal.total_deposit] == [(DENOM, str(MIN_DEPOSIT))]
    listed = chain.query(LEGACY + "Proposals", q.QueryProposalsRequest(), q.QueryProposalsResponse)
    assert [p.proposal_id for p in listed.proposals] == [text, change]
    assert listed.proposals[1].content == chain.proposal(change).messages[0]
    vote = chain.query(
        LEGACY + "Vote", q.QueryVoteRequest(proposal_id=text, voter=addr(VALIDATORS[0])), q.QueryVoteResponse
    ).vote
    assert [(o.option, o.weight) for o in vote.options] == [
        (legacy.VOTE_OPTION_YES, "600000000000000000"),
        (legacy.VOTE_OPTION_NO, "400000000000000000"),
    ]
    votes = chain.query(LEGACY + "Votes", q.QueryVotesRequest(proposal_id=text), q.QueryVotesResponse)
    assert [v.voter for v in votes.votes] == [addr(VALIDATORS[0])]
    deposit = chain.query(
        LEGACY + "Deposit",
        q.QueryDepositRequest(proposal_id=text, depositor=addr(VALIDATORS[0])),
        q.QueryDepositResponse,
    ).deposit
    assert (deposit.depositor, deposit.amount[0].amount) == (addr(VALIDATORS[0]), str(MIN_DEPOSIT))
    deposits = chain.query(LEGACY + "Deposits", q.QueryDepositsRequest(proposal_id=change), q.QueryDepositsResponse)
    assert [d.depositor for d in deposits.deposits] == [addr(VALIDATORS[1])]
    tally = chain.query(LEGACY + "TallyResult", q.QueryTallyResultRequest(proposal_id=text), q.QueryTallyResultResponse)
    assert tally.tally == legacy.TallyResult(yes="600", abstain="0", no="400", no_with_veto="0")
    tallying = chain.query(LEGACY + "Params", q.QueryParamsRequest(params_type="tallying"), q.QueryParamsResponse)
    assert tallying.tally_params == legacy.TallyParams(
        quorum=b"334000000000000000", threshold=b"500000000000000000", veto_threshold=b"334000000000000000"
    )
    voting = chain.query(LEGACY + "Params", q.QueryParamsRequest(params_type="voting"), q.QueryParamsResponse)
    assert voting.voting_params.voting_period.seconds == VOTING_PERIOD // SECOND
    depositing = chain.query(LEGACY + "Params", q.QueryParamsRequest(params_type="deposit"), q.QueryParamsResponse)
    assert depositing.deposit_params.min_deposit[0].amount == str(MIN_DEPOSIT)
    for bad in (q.QueryParamsRequest(), q.QueryParamsRequest(params_type="colour")):
        reply = chain.app.query(abci.RequestQuery(path=LEGACY + "Params", data=bad.SerializeToString()))
        assert reply.code != 0
    missing = chain.app.query(
        abci.RequestQuery(path=LEGACY + "Proposal", data=q.QueryProposalRequest(proposal_id=99).SerializeToString())
    )
    assert missing.code != 0 and "doesn't exist" in missing.log


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("expedited_voting_period", "172800s", "strictly less than voting_period"),
        ("expedited_threshold", "0.500000000000000000", "greater than threshold"),
        ("expedited_min_deposit", [{"denom": "ngonka", "amount": "100000000000"}], "must be greater than min_deposit"),
        ("expedited_min_deposit", [], "expedited_min_deposit must not be empty"),
        ("proposal_cancel_ratio", "1.5", "must be in [0, 1]"),
        ("proposal_cancel_dest", "gonka1nope", "proposal_cancel_dest"),
    ],
)
def test_params_keep_the_sdk_rules(field: str, value: object, words: str) -> None:
    params = json_format.ParseDict({field: value}, default_params())
    if field == "expedited_min_deposit":
        del params.expedited_min_deposit[:]
        params.expedited_min_deposit.extend(json_format.ParseDict({field: value}, type(params)()).expedited_min_deposit)
    with pytest.raises(ValueError, match=re.escape(words)):
        validate_params(params)
    validate_params(default_params())


def test_v1beta1_is_served_over_grpc(chain: GovChain) -> None:
    text = submit(chain, VALIDATORS[0], [])

    async def calls(
        channel: grpc.aio.Channel,
    ) -> tuple[legacy_query.QueryProposalResponse, legacy_query.QueryParamsResponse]:
        stub = legacy_grpc.QueryStub(channel)
        return (
            await stub.Proposal(legacy_query.QueryProposalRequest(proposal_id=text)),
            await stub.Params(legacy_query.QueryParamsRequest(params_type="tallying")),
        )

    proposal, params = over_grpc(chain, calls)
    assert proposal.proposal.content.type_url == "/cosmos.gov.v1beta1.TextProposal"
    assert params.tally_params.threshold == b"500000000000000000"


@pytest.mark.parametrize(
    "content, flag, expedited",
    [('{"title": "t", "summary": "s"}', False, False), ('{"expedited": true}', False, True), ("{}", True, True)],
)
def test_cli_reads_text_and_expedited_proposals(tmp_path: Path, content: str, flag: bool, expedited: bool) -> None:
    path = tmp_path / "proposal.json"
    path.write_text(content)
    msg = read_proposal(str(path), addr(VALIDATORS[0]), flag)
    assert (list(msg.messages), msg.expedited) == ([], expedited)
