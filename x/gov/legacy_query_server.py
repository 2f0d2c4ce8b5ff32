"""``cosmos.gov.v1beta1.Query``, served beside v1 for clients that still use it: each answer is v1's,
converted to the v1beta1 shape as the SDK's legacy query server does (x/gov ``migrations/v3/convert.go``).

Statuses and vote options keep their numbers. v1beta1's ``Dec`` fields (tally params, bytes; vote weights,
strings) carry the SDK's LegacyDec wire form, ``value × 10^18`` in ASCII digits, as gogoproto writes them.
A proposal's ``content``: the content of its first message when that is a ``MsgExecLegacyContent``, else
its first message (the SDK's stand-in for clients of v1beta1), and for a text proposal (no messages) a
``TextProposal`` of its title and summary.
"""

from __future__ import annotations

from typing import Protocol

from cosmpy.protos.cosmos.gov.v1 import gov_pb2, tx_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as v1_query
from cosmpy.protos.cosmos.gov.v1beta1 import gov_pb2 as legacy
from cosmpy.protos.cosmos.gov.v1beta1 import query_pb2 as q
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.context import Context
from sdk.dec import legacy_dec_bytes, parse_dec
from sdk.errors import ErrInvalidRequest
from sdk.module import QueryRoute, type_url
from sdk.services import cosmos

LEGACY_CONTENT_URL = type_url(tx_pb2.MsgExecLegacyContent)


def dec_wire(text: str) -> bytes:
    """A LegacyDec's proto form (``0.5`` → ``500000000000000000``)."""
    return legacy_dec_bytes(parse_dec(text or "0", "decimal"))


def content(proposal: gov_pb2.Proposal) -> AnyPb:
    packed = AnyPb()
    if not proposal.messages:
        packed.Pack(legacy.TextProposal(title=proposal.title, description=proposal.summary), type_url_prefix="/")
    elif proposal.messages[0].type_url == LEGACY_CONTENT_URL:
        packed.CopyFrom(tx_pb2.MsgExecLegacyContent.FromString(proposal.messages[0].value).content)
    else:
        packed.CopyFrom(proposal.messages[0])
    return packed


def tally_result(result: gov_pb2.TallyResult) -> legacy.TallyResult:
    return legacy.TallyResult(
        yes=result.yes_count or "0",
        abstain=result.abstain_count or "0",
        no=result.no_count or "0",
        no_with_veto=result.no_with_veto_count or "0",
    )


def proposal(p: gov_pb2.Proposal) -> legacy.Proposal:
    converted = legacy.Proposal(
        proposal_id=p.id,
        content=content(p),
        status=p.status,
        final_tally_result=tally_result(p.final_tally_result),
        total_deposit=p.total_deposit,
    )
    for name in ("submit_time", "deposit_end_time", "voting_start_time", "voting_end_time"):
        if p.HasField(name):
            getattr(converted, name).CopyFrom(getattr(p, name))
    return converted


def vote(v: gov_pb2.Vote) -> legacy.Vote:
    return legacy.Vote(
        proposal_id=v.proposal_id,
        voter=v.voter,
        options=[legacy.WeightedVoteOption(option=o.option, weight=dec_wire(o.weight).decode()) for o in v.options],
    )


def deposit(d: gov_pb2.Deposit) -> legacy.Deposit:
    return legacy.Deposit(proposal_id=d.proposal_id, depositor=d.depositor, amount=d.amount)


class V1Queries(Protocol):
    """The ``cosmos.gov.v1`` reads v1beta1 answers through (query_server.py's ``QueryServer``, which serves these
    routes beside its own)."""

    def proposal(self, ctx: Context, req: v1_query.QueryProposalRequest) -> v1_query.QueryProposalResponse: ...
    def proposals(self, ctx: Context, req: v1_query.QueryProposalsRequest) -> v1_query.QueryProposalsResponse: ...
    def vote(self, ctx: Context, req: v1_query.QueryVoteRequest) -> v1_query.QueryVoteResponse: ...
    def votes(self, ctx: Context, req: v1_query.QueryVotesRequest) -> v1_query.QueryVotesResponse: ...
    def deposit(self, ctx: Context, req: v1_query.QueryDepositRequest) -> v1_query.QueryDepositResponse: ...
    def deposits(self, ctx: Context, req: v1_query.QueryDepositsRequest) -> v1_query.QueryDepositsResponse: ...
    def tally(self, ctx: Context, req: v1_query.QueryTallyResultRequest) -> v1_query.QueryTallyResultResponse: ...
    def params(self, ctx: Context, req: v1_query.QueryParamsRequest) -> v1_query.QueryParamsResponse: ...


class LegacyQueryServer:
    """v1beta1 over v1 (``QueryServer``): the same reads, the same errors."""

    def __init__(self, v1: V1Queries) -> None:
        self.v1 = v1

    def routes(self) -> dict[str, QueryRoute]:
        query = cosmos("gov", "v1beta1").query
        return {
            query + "Proposal": QueryRoute(q.QueryProposalRequest, self.proposal, bounded=True),
            query + "Proposals": QueryRoute(q.QueryProposalsRequest, self.proposals),
            query + "Vote": QueryRoute(q.QueryVoteRequest, self.vote, bounded=True),
            query + "Votes": QueryRoute(q.QueryVotesRequest, self.votes),
            query + "Deposit": QueryRoute(q.QueryDepositRequest, self.deposit, bounded=True),
            query + "Deposits": QueryRoute(q.QueryDepositsRequest, self.deposits),
            query + "TallyResult": QueryRoute(q.QueryTallyResultRequest, self.tally),
            query + "Params": QueryRoute(q.QueryParamsRequest, self.params, bounded=True),
        }

    def proposal(self, ctx: Context, req: q.QueryProposalRequest) -> q.QueryProposalResponse:
        reply = self.v1.proposal(ctx, v1_query.QueryProposalRequest(proposal_id=req.proposal_id))
        return q.QueryProposalResponse(proposal=proposal(reply.proposal))

    def proposals(self, ctx: Context, req: q.QueryProposalsRequest) -> q.QueryProposalsResponse:
        reply = self.v1.proposals(
            ctx,
            v1_query.QueryProposalsRequest(
                proposal_status=req.proposal_status,
                voter=req.voter,
                depositor=req.depositor,
                pagination=req.pagination,
            ),
        )
        return q.QueryProposalsResponse(proposals=[proposal(p) for p in reply.proposals], pagination=reply.pagination)

    def vote(self, ctx: Context, req: q.QueryVoteRequest) -> q.QueryVoteResponse:
        reply = self.v1.vote(ctx, v1_query.QueryVoteRequest(proposal_id=req.proposal_id, voter=req.voter))
        return q.QueryVoteResponse(vote=vote(reply.vote))

    def votes(self, ctx: Context, req: q.QueryVotesRequest) -> q.QueryVotesResponse:
        reply = self.v1.votes(ctx, v1_query.QueryVotesRequest(proposal_id=req.proposal_id, pagination=req.pagination))
        return q.QueryVotesResponse(votes=[vote(v) for v in reply.votes], pagination=reply.pagination)

    def deposit(self, ctx: Context, req: q.QueryDepositRequest) -> q.QueryDepositResponse:
        reply = self.v1.deposit(ctx, v1_query.QueryDepositRequest(proposal_id=req.proposal_id, depositor=req.depositor))
        return q.QueryDepositResponse(deposit=deposit(reply.deposit))

    def deposits(self, ctx: Context, req: q.QueryDepositsRequest) -> q.QueryDepositsResponse:
        reply = self.v1.deposits(
            ctx, v1_query.QueryDepositsRequest(proposal_id=req.proposal_id, pagination=req.pagination)
        )
        return q.QueryDepositsResponse(deposits=[deposit(d) for d in reply.deposits], pagination=reply.pagination)

    def tally(self, ctx: Context, req: q.QueryTallyResultRequest) -> q.QueryTallyResultResponse:
        reply = self.v1.tally(ctx, v1_query.QueryTallyResultRequest(proposal_id=req.proposal_id))
        return q.QueryTallyResultResponse(tally=tally_result(reply.tally))

    def params(self, ctx: Context, req: q.QueryParamsRequest) -> q.QueryParamsResponse:
        """One section, named by ``params_type`` (voting, deposit, tallying): v1beta1 has no whole params."""
        if not req.params_type:
            raise ErrInvalidRequest.wrap("params_type is required: voting, deposit or tallying")
        v1 = self.v1.params(ctx, v1_query.QueryParamsRequest(params_type=req.params_type))
        reply = q.QueryParamsResponse()
        if req.params_type == "voting":
            reply.voting_params.voting_period.CopyFrom(v1.voting_params.voting_period)
        elif req.params_type == "deposit":
            reply.deposit_params.min_deposit.extend(v1.deposit_params.min_deposit)
            reply.deposit_params.max_deposit_period.CopyFrom(v1.deposit_params.max_deposit_period)
        else:
            tally = v1.tally_params
            reply.tally_params.quorum = dec_wire(tally.quorum)
            reply.tally_params.threshold = dec_wire(tally.threshold)
            reply.tally_params.veto_threshold = dec_wire(tally.veto_threshold)
        return reply
