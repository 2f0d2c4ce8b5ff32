"""``cosmos.gov.v1.Query``: proposals, votes, deposits, tallies and params, as the Cosmos SDK serves them."""

from __future__ import annotations

from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2, query_pb2

from sdk.address import parse_address
from sdk.context import Context
from sdk.errors import ErrInvalidRequest, ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import DEFAULT_LIMIT, MAX_LIMIT, paginate
from sdk.services import cosmos
from x.gov import keys
from x.gov.keeper import VOTING_PERIOD, GovKeeper
from x.gov.legacy_query_server import LegacyQueryServer


class QueryServer:
    def __init__(self, keeper: GovKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = cosmos("gov", "v1").query
        q = query_pb2
        return {
            query + "Constitution": QueryRoute(
                q.QueryConstitutionRequest, lambda c, r: q.QueryConstitutionResponse(), bounded=True
            ),
            query + "Proposal": QueryRoute(q.QueryProposalRequest, self.proposal, bounded=True),
            query + "Proposals": QueryRoute(q.QueryProposalsRequest, self.proposals),
            query + "Vote": QueryRoute(q.QueryVoteRequest, self.vote, bounded=True),
            query + "Votes": QueryRoute(q.QueryVotesRequest, self.votes),
            query + "Deposit": QueryRoute(q.QueryDepositRequest, self.deposit, bounded=True),
            query + "Deposits": QueryRoute(q.QueryDepositsRequest, self.deposits),
            query + "TallyResult": QueryRoute(q.QueryTallyResultRequest, self.tally),
            query + "Params": QueryRoute(q.QueryParamsRequest, self.params, bounded=True),
        }

    def proposal(self, ctx: Context, req: query_pb2.QueryProposalRequest) -> query_pb2.QueryProposalResponse:
        return query_pb2.QueryProposalResponse(proposal=self._proposal(ctx, req.proposal_id))

    def proposals(self, ctx: Context, req: query_pb2.QueryProposalsRequest) -> query_pb2.QueryProposalsResponse:
        """Proposals in id order, filtered by status, voter (has a vote) and depositor (has a deposit)."""
        k = self.keeper
        voter = parse_address(req.voter, "voter") if req.voter else None
        depositor = parse_address(req.depositor, "depositor") if req.depositor else None

        def keep(proposal: gov_pb2.Proposal) -> bool:
            return (
                (not req.proposal_status or proposal.status == req.proposal_status)
                and (voter is None or k.get_vote(ctx, proposal.id, voter) is not None)
                and (depositor is None or k.get_deposit(ctx, proposal.id, depositor) is not None)
            )

        entries = [
            (key, raw)
            for key, raw in ctx.kv(keys.STORE_PREFIX).iterate(keys.PROPOSAL_PREFIX)
            if keep(gov_pb2.Proposal.FromString(raw))
        ]
        page, reply = _page(entries, len(keys.PROPOSAL_PREFIX), req.pagination)
        return query_pb2.QueryProposalsResponse(
            proposals=[gov_pb2.Proposal.FromString(v) for v in page], pagination=reply
        )

    def vote(self, ctx: Context, req: query_pb2.QueryVoteRequest) -> query_pb2.QueryVoteResponse:
        self._proposal(ctx, req.proposal_id)
        vote = self.keeper.get_vote(ctx, req.proposal_id, parse_address(req.voter, "voter"))
        if vote is None:
            raise ErrNotFound.wrap(f"voter {req.voter} has not voted on proposal {req.proposal_id}")
        return query_pb2.QueryVoteResponse(vote=vote)

    def votes(self, ctx: Context, req: query_pb2.QueryVotesRequest) -> query_pb2.QueryVotesResponse:
        self._proposal(ctx, req.proposal_id)
        items, reply = paginate(ctx.kv(keys.STORE_PREFIX), keys.votes_prefix(req.proposal_id), req.pagination)
        return query_pb2.QueryVotesResponse(votes=[gov_pb2.Vote.FromString(v) for _, v in items], pagination=reply)

    def deposit(self, ctx: Context, req: query_pb2.QueryDepositRequest) -> query_pb2.QueryDepositResponse:
        self._proposal(ctx, req.proposal_id)
        deposit = self.keeper.get_deposit(ctx, req.proposal_id, parse_address(req.depositor, "depositor"))
        if deposit is None:
            raise ErrNotFound.wrap(f"depositor {req.depositor} has no deposit on proposal {req.proposal_id}")
        return query_pb2.QueryDepositResponse(deposit=deposit)

    def deposits(self, ctx: Context, req: query_pb2.QueryDepositsRequest) -> query_pb2.QueryDepositsResponse:
        self._proposal(ctx, req.proposal_id)
        items, reply = paginate(ctx.kv(keys.STORE_PREFIX), keys.deposits_prefix(req.proposal_id), req.pagination)
        return query_pb2.QueryDepositsResponse(
            deposits=[gov_pb2.Deposit.FromString(v) for _, v in items], pagination=reply
        )

    def tally(self, ctx: Context, req: query_pb2.QueryTallyResultRequest) -> query_pb2.QueryTallyResultResponse:
        """During voting, the tally the votes so far would give with the validator set now; after, the final
        one; in the deposit period, zeros."""
        proposal = self._proposal(ctx, req.proposal_id)
        if proposal.status == VOTING_PERIOD:
            return query_pb2.QueryTallyResultResponse(tally=self.keeper.tally(ctx, proposal).result)
        return query_pb2.QueryTallyResultResponse(tally=proposal.final_tally_result)

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        """``params``, and the deprecated section ``params_type`` (voting, deposit, tallying) names."""
        params = self.keeper.get_params(ctx)
        reply = query_pb2.QueryParamsResponse(params=params)
        if req.params_type == "voting":
            reply.voting_params.voting_period.CopyFrom(params.voting_period)
        elif req.params_type == "deposit":
            reply.deposit_params.min_deposit.extend(params.min_deposit)
            reply.deposit_params.max_deposit_period.CopyFrom(params.max_deposit_period)
        elif req.params_type == "tallying":
            reply.tally_params.quorum = params.quorum
            reply.tally_params.threshold = params.threshold
            reply.tally_params.veto_threshold = params.veto_threshold
        elif req.params_type:
            raise ErrInvalidRequest.wrap(f"unknown params type {req.params_type!r}: voting, deposit or tallying")
        return reply

    def _proposal(self, ctx: Context, proposal_id: int) -> gov_pb2.Proposal:
        if not proposal_id:
            raise ErrInvalidRequest.wrap("proposal id can not be 0")
        proposal = self.keeper.get_proposal(ctx, proposal_id)
        if proposal is None:
            raise ErrNotFound.wrap(f"proposal {proposal_id} doesn't exist")
        return proposal


def _page(
    entries: list[tuple[bytes, bytes]], strip: int, page: pagination_pb2.PageRequest
) -> tuple[list[bytes], pagination_pb2.PageResponse]:
    """Cosmos pagination over an already filtered list of (store key, value): by key or offset, a limit,
    reverse, count_total (as ``sdk/pagination.py`` over a prefix)."""
    if page.key and page.offset:
        raise ErrInvalidRequest.wrap("pagination takes either a key or an offset, not both")
    limit = page.limit or DEFAULT_LIMIT
    if limit > MAX_LIMIT:
        raise ErrInvalidRequest.wrap(f"pagination limit {limit} exceeds {MAX_LIMIT}")
    items = [(key[strip:], value) for key, value in entries]
    if page.reverse:
        items.reverse()
    start = page.offset
    if page.key:
        start = next(
            (i for i, (key, _) in enumerate(items) if (key <= page.key if page.reverse else key >= page.key)),
            len(items),
        )
    chosen = items[start : start + limit]
    following = items[start + limit : start + limit + 1]
    total = len(items) if page.count_total and not page.key else 0
    return [v for _, v in chosen], pagination_pb2.PageResponse(
        next_key=following[0][0] if following else b"", total=total
    )


def routes(keeper: GovKeeper) -> dict[str, QueryRoute]:
    """``cosmos.gov.v1``'s routes and ``cosmos.gov.v1beta1``'s, which answer through them (legacy_query_server.py)."""
    v1 = QueryServer(keeper)
    return {**v1.routes(), **LegacyQueryServer(v1).routes()}
