"""Gov's v1 state in the legacy ``cosmos.gov.v1beta1`` shape, for clients that still read it (CosmJS's gov
extension asks only those paths; ``query_server.py`` serves them).

The conversion is the Cosmos SDK's own (x/gov/migrations/v3 ``ConvertToLegacy*``): a proposal's ``content``
is its first message (there is no ``MsgExecLegacyContent`` here), left empty when it has none; tallies are
the v1 counts; a vote's weights and the tally params are ``LegacyDec``s in their proto form (value × 10^18).
"""

from __future__ import annotations

from cosmpy.protos.cosmos.gov.v1 import gov_pb2 as v1_gov
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as v1
from cosmpy.protos.cosmos.gov.v1beta1 import gov_pb2, query_pb2

from sdk.dec import legacy_dec_bytes, parse_dec

PARAMS_TYPES = ("voting", "deposit", "tallying")


def legacy_params(reply: v1.QueryParamsResponse, params_type: str) -> query_pb2.QueryParamsResponse:
    """The section ``params_type`` (one of ``PARAMS_TYPES``) of a v1 params answer for that type."""
    legacy = query_pb2.QueryParamsResponse()
    if params_type == "voting":
        legacy.voting_params.voting_period.CopyFrom(reply.voting_params.voting_period)
    elif params_type == "deposit":
        legacy.deposit_params.min_deposit.extend(reply.deposit_params.min_deposit)
        legacy.deposit_params.max_deposit_period.CopyFrom(reply.deposit_params.max_deposit_period)
    else:
        tally = reply.tally_params
        legacy.tally_params.quorum = dec_proto(tally.quorum, "quorum")
        legacy.tally_params.threshold = dec_proto(tally.threshold, "threshold")
        legacy.tally_params.veto_threshold = dec_proto(tally.veto_threshold, "veto threshold")
    return legacy


def dec_proto(text: str, what: str) -> bytes:
    """A v1 decimal (``0.5``) as a v1beta1 ``LegacyDec`` field holds it (``500000000000000000``)."""
    return legacy_dec_bytes(parse_dec(text, what))


def legacy_proposal(proposal: v1_gov.Proposal) -> gov_pb2.Proposal:
    legacy = gov_pb2.Proposal(
        proposal_id=proposal.id,
        status=proposal.status,  # the same numbers in both versions
        final_tally_result=legacy_tally(proposal.final_tally_result),
        submit_time=proposal.submit_time,
        deposit_end_time=proposal.deposit_end_time,
        total_deposit=proposal.total_deposit,
        voting_start_time=proposal.voting_start_time,
        voting_end_time=proposal.voting_end_time,
    )
    if proposal.messages:
        legacy.content.CopyFrom(proposal.messages[0])
    return legacy


def legacy_tally(tally: v1_gov.TallyResult) -> gov_pb2.TallyResult:
    return gov_pb2.TallyResult(
        yes=tally.yes_count, abstain=tally.abstain_count, no=tally.no_count, no_with_veto=tally.no_with_veto_count
    )


def legacy_vote(vote: v1_gov.Vote) -> gov_pb2.Vote:
    options = [
        gov_pb2.WeightedVoteOption(option=o.option, weight=dec_proto(o.weight, "weight").decode()) for o in vote.options
    ]
    return gov_pb2.Vote(proposal_id=vote.proposal_id, voter=vote.voter, options=options)


def legacy_deposit(deposit: v1_gov.Deposit) -> gov_pb2.Deposit:
    return gov_pb2.Deposit(proposal_id=deposit.proposal_id, depositor=deposit.depositor, amount=deposit.amount)
