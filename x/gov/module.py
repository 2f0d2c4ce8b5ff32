"""x/gov wired as a module: cosmos.gov.v1 messages, queries and genesis; the periods end in end block."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.gov.v1 import genesis_pb2, gov_pb2, query_pb2, tx_pb2
from google.protobuf import json_format

from sdk.address import parse_address
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest, ErrNotFound
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.pagination import DEFAULT_LIMIT, MAX_LIMIT, paginate
from sdk.params import update_params_route
from x.gov import keys, msg_server
from x.gov.expected_keepers import PackedSigners
from x.gov.keeper import ACTIVE, FAILED, VOTING_PERIOD, GovKeeper
from x.gov.params import default_params, validate_params

QUERY = "/cosmos.gov.v1.Query/"


class GovModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: GovKeeper, packed_signers: PackedSigners) -> None:
        """``packed_signers``: the router's (sdk/baseapp.py), to check a proposal's messages at submission."""
        self.keeper = keeper
        self.packed_signers = packed_signers

    # --- genesis ------------------------------------------------------------------------------------------

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(starting_proposal_id=1, params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``cosmos.gov.v1.GenesisState``: params (default if left out), the next proposal id and, for an
        exported chain, its proposals, deposits and votes; the deposits account (bank's genesis) must hold at
        least the deposits recorded (``deposits_held``)."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState(), ignore_unknown_fields=False)
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        next_id = genesis.starting_proposal_id or 1
        store = ctx.kv(keys.STORE_PREFIX)
        for proposal in genesis.proposals:
            if not 0 < proposal.id < next_id or k.get_proposal(ctx, proposal.id) is not None:
                raise ValueError(f"gov genesis: proposal id {proposal.id} repeated or not below "
                                 f"starting_proposal_id {next_id}")
            k.set_proposal(ctx, proposal)
            k.queue(ctx, proposal)
        for deposit in genesis.deposits:
            proposal = k.get_proposal(ctx, deposit.proposal_id)
            if proposal is None or proposal.status not in (*ACTIVE, FAILED):
                raise ValueError(f"gov genesis: deposit for proposal {deposit.proposal_id}, neither an active one "
                                 "nor a failed one whose deposits are unsettled")
            store.set(keys.deposit_key(deposit.proposal_id, bech32.decode(deposit.depositor)),
                      deposit.SerializeToString())
        for vote in genesis.votes:
            proposal = k.get_proposal(ctx, vote.proposal_id)
            if proposal is None or proposal.status != VOTING_PERIOD:
                raise ValueError(f"gov genesis: vote on proposal {vote.proposal_id}, not one in its voting period")
            store.set(keys.vote_key(vote.proposal_id, bech32.decode(vote.voter)), vote.SerializeToString())
        k.set_next_proposal_id(ctx, next_id)
        error = k.deposits_held(ctx)
        if error:
            raise ValueError(f"gov genesis: {error}")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        return message_dict(genesis_pb2.GenesisState(
            starting_proposal_id=k.next_proposal_id(ctx), params=k.get_params(ctx), proposals=k.proposals(ctx),
            deposits=k.deposits(ctx), votes=k.votes(ctx)))

    # --- blocks and invariants ----------------------------------------------------------------------------

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        self.keeper.end_block(ctx)

    def invariants(self) -> dict[str, Invariant]:
        return {"deposits-held": self.keeper.deposits_held}

    # --- messages -----------------------------------------------------------------------------------------

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgSubmitProposal): MsgRoute(
                tx_pb2.MsgSubmitProposal, lambda m: [parse_address(m.proposer, "proposer")],
                msg_server.submit_validator(self.packed_signers, k.authority),
                lambda ctx, m: msg_server.handle_submit(ctx, k, m)),
            type_url(tx_pb2.MsgDeposit): MsgRoute(
                tx_pb2.MsgDeposit, lambda m: [parse_address(m.depositor, "depositor")], msg_server.validate_deposit,
                lambda ctx, m: msg_server.handle_deposit(ctx, k, m)),
            type_url(tx_pb2.MsgVote): MsgRoute(
                tx_pb2.MsgVote, lambda m: [parse_address(m.voter, "voter")], msg_server.validate_vote,
                lambda ctx, m: msg_server.handle_vote(ctx, k, m)),
            type_url(tx_pb2.MsgVoteWeighted): MsgRoute(
                tx_pb2.MsgVoteWeighted, lambda m: [parse_address(m.voter, "voter")],
                msg_server.validate_vote_weighted, lambda ctx, m: msg_server.handle_vote_weighted(ctx, k, m)),
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params),
        }

    # --- queries ------------------------------------------------------------------------------------------

    def query_routes(self) -> dict[str, QueryRoute]:
        q = query_pb2
        return {
            QUERY + "Constitution": QueryRoute(q.QueryConstitutionRequest, lambda c, r: q.QueryConstitutionResponse(),
                                               bounded=True),
            QUERY + "Proposal": QueryRoute(q.QueryProposalRequest, self.query_proposal, bounded=True),
            QUERY + "Proposals": QueryRoute(q.QueryProposalsRequest, self.query_proposals),
            QUERY + "Vote": QueryRoute(q.QueryVoteRequest, self.query_vote, bounded=True),
            QUERY + "Votes": QueryRoute(q.QueryVotesRequest, self.query_votes),
            QUERY + "Deposit": QueryRoute(q.QueryDepositRequest, self.query_deposit, bounded=True),
            QUERY + "Deposits": QueryRoute(q.QueryDepositsRequest, self.query_deposits),
            QUERY + "TallyResult": QueryRoute(q.QueryTallyResultRequest, self.query_tally),
            QUERY + "Params": QueryRoute(q.QueryParamsRequest, self.query_params, bounded=True),
        }

    def _proposal(self, ctx: Context, proposal_id: int) -> gov_pb2.Proposal:
        if not proposal_id:
            raise ErrInvalidRequest.wrap("proposal id can not be 0")
        proposal = self.keeper.get_proposal(ctx, proposal_id)
        if proposal is None:
            raise ErrNotFound.wrap(f"proposal {proposal_id} doesn't exist")
        return proposal

    def query_proposal(self, ctx: Context, req: query_pb2.QueryProposalRequest) -> query_pb2.QueryProposalResponse:
        return query_pb2.QueryProposalResponse(proposal=self._proposal(ctx, req.proposal_id))

    def query_proposals(self, ctx: Context, req: query_pb2.QueryProposalsRequest) -> query_pb2.QueryProposalsResponse:
        """Proposals in id order, filtered by status, voter (has a vote) and depositor (has a deposit)."""
        k = self.keeper
        voter = parse_address(req.voter, "voter") if req.voter else None
        depositor = parse_address(req.depositor, "depositor") if req.depositor else None

        def keep(proposal: gov_pb2.Proposal) -> bool:
            return ((not req.proposal_status or proposal.status == req.proposal_status)
                    and (voter is None or k.get_vote(ctx, proposal.id, voter) is not None)
                    and (depositor is None or k.get_deposit(ctx, proposal.id, depositor) is not None))

        entries = [(key, raw) for key, raw in ctx.kv(keys.STORE_PREFIX).iterate(keys.PROPOSAL_PREFIX)
                   if keep(gov_pb2.Proposal.FromString(raw))]
        page, reply = _page(entries, len(keys.PROPOSAL_PREFIX), req.pagination)
        return query_pb2.QueryProposalsResponse(proposals=[gov_pb2.Proposal.FromString(v) for v in page],
                                                pagination=reply)

    def query_vote(self, ctx: Context, req: query_pb2.QueryVoteRequest) -> query_pb2.QueryVoteResponse:
        self._proposal(ctx, req.proposal_id)
        vote = self.keeper.get_vote(ctx, req.proposal_id, parse_address(req.voter, "voter"))
        if vote is None:
            raise ErrNotFound.wrap(f"voter {req.voter} has not voted on proposal {req.proposal_id}")
        return query_pb2.QueryVoteResponse(vote=vote)

    def query_votes(self, ctx: Context, req: query_pb2.QueryVotesRequest) -> query_pb2.QueryVotesResponse:
        self._proposal(ctx, req.proposal_id)
        items, reply = paginate(ctx.kv(keys.STORE_PREFIX), keys.votes_prefix(req.proposal_id), req.pagination)
        return query_pb2.QueryVotesResponse(votes=[gov_pb2.Vote.FromString(v) for _, v in items], pagination=reply)

    def query_deposit(self, ctx: Context, req: query_pb2.QueryDepositRequest) -> query_pb2.QueryDepositResponse:
        self._proposal(ctx, req.proposal_id)
        deposit = self.keeper.get_deposit(ctx, req.proposal_id, parse_address(req.depositor, "depositor"))
        if deposit is None:
            raise ErrNotFound.wrap(f"depositor {req.depositor} has no deposit on proposal {req.proposal_id}")
        return query_pb2.QueryDepositResponse(deposit=deposit)

    def query_deposits(self, ctx: Context, req: query_pb2.QueryDepositsRequest) -> query_pb2.QueryDepositsResponse:
        self._proposal(ctx, req.proposal_id)
        items, reply = paginate(ctx.kv(keys.STORE_PREFIX), keys.deposits_prefix(req.proposal_id), req.pagination)
        return query_pb2.QueryDepositsResponse(deposits=[gov_pb2.Deposit.FromString(v) for _, v in items],
                                               pagination=reply)

    def query_tally(self, ctx: Context, req: query_pb2.QueryTallyResultRequest) -> query_pb2.QueryTallyResultResponse:
        """During voting, the tally the votes so far would give with the validator set now; after, the final
        one; in the deposit period, zeros."""
        proposal = self._proposal(ctx, req.proposal_id)
        if proposal.status == VOTING_PERIOD:
            return query_pb2.QueryTallyResultResponse(tally=self.keeper.tally(ctx, proposal.id).result)
        return query_pb2.QueryTallyResultResponse(tally=proposal.final_tally_result)

    def query_params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
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


def _page(entries: list[tuple[bytes, bytes]], strip: int, page: pagination_pb2.PageRequest
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
        start = next((i for i, (key, _) in enumerate(items)
                      if (key <= page.key if page.reverse else key >= page.key)), len(items))
    chosen = items[start:start + limit]
    following = items[start + limit:start + limit + 1]
    total = len(items) if page.count_total and not page.key else 0
    return [v for _, v in chosen], pagination_pb2.PageResponse(next_key=following[0][0] if following else b"",
                                                               total=total)
