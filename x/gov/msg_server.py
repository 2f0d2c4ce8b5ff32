"""cosmos.gov.v1.Msg: SubmitProposal, Deposit, Vote, VoteWeighted, CancelProposal (UpdateParams:
``sdk/params.py``).

Stateless checks (``validate_*``) run before any state is read, at CheckTx too: a proposal whose messages
are not all signed by exactly the authority never reaches the mempool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cosmpy.protos.cosmos.gov.v1 import gov_pb2, tx_pb2

from sdk.address import parse_address
from sdk.coins import coins_from_proto
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError, ErrInvalidCoins, ErrInvalidRequest, ErrUnknownRequest
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.gov.errors import (
    ErrInvalidProposal,
    ErrInvalidProposalMsg,
    ErrInvalidSigner,
    ErrInvalidVote,
    ErrMetadataTooLong,
    ErrSummaryTooLong,
    ErrUnroutableProposalMsg,
)
from x.gov.expected_keepers import PackedSigners
from x.gov.keeper import GovKeeper, parse_options
from x.gov.params import validate_params

MAX_METADATA_LEN = 255
"""The SDK's default ``MaxMetadataLen``: proposal and vote metadata, and the title."""
MAX_SUMMARY_LEN = 10_200
SUBMIT_PROPOSAL_URL = type_url(tx_pb2.MsgSubmitProposal)


def submit_validator(packed_signers: PackedSigners, authority: bytes) -> Callable[[Any], None]:
    """``MsgSubmitProposal``'s stateless check: proposer, title, summary, metadata, initial deposit, and each
    message known to the router, valid, signed by exactly the authority (else ``gov/13``) and not itself a
    ``MsgSubmitProposal`` (``gov/12``: a passed proposal would submit, and fund from the gov account, a new
    proposal that no one has voted on yet). No messages at all is a text (signal) proposal, as in the SDK
    v0.50: voted on, executing nothing."""

    def validate(msg: tx_pb2.MsgSubmitProposal) -> None:
        parse_address(msg.proposer, "proposer")
        if not msg.title.strip():
            raise ErrInvalidProposal.wrap("proposal title cannot be empty")
        if not msg.summary.strip():
            raise ErrInvalidProposal.wrap("proposal summary cannot be empty")
        if len(msg.title) > MAX_METADATA_LEN:
            raise ErrMetadataTooLong.wrap(f"title is longer than {MAX_METADATA_LEN} characters")
        if len(msg.metadata) > MAX_METADATA_LEN:
            raise ErrMetadataTooLong.wrap(f"metadata is longer than {MAX_METADATA_LEN} characters")
        if len(msg.summary) > MAX_SUMMARY_LEN:
            raise ErrSummaryTooLong.wrap(f"summary is longer than {MAX_SUMMARY_LEN} characters")
        coins_from_proto(msg.initial_deposit)
        expected = bech32.encode(authority)
        for index, packed in enumerate(msg.messages):
            what = f"message {index} ({packed.type_url})"
            try:
                signers = packed_signers(packed)
            except ABCIError as err:
                if err.kind is ErrUnknownRequest:
                    raise ErrUnroutableProposalMsg.wrap(what) from None
                raise ErrInvalidProposalMsg.wrap(f"{what}: {err.log}") from None
            if signers != [authority]:
                got = ", ".join(bech32.encode(s) for s in signers) or "none"
                raise ErrInvalidSigner.wrap(f"{what} must be signed by exactly the gov authority {expected}, got {got}")
            if packed.type_url == SUBMIT_PROPOSAL_URL:
                raise ErrInvalidProposalMsg.wrap(f"{what}: a proposal may not submit proposals")

    return validate


def handle_submit(ctx: Context, k: GovKeeper, msg: tx_pb2.MsgSubmitProposal) -> tx_pb2.MsgSubmitProposalResponse:
    proposal_id = k.submit_proposal(
        ctx,
        msg.messages,
        coins_from_proto(msg.initial_deposit),
        bech32.decode(msg.proposer),
        msg.metadata,
        msg.title,
        msg.summary,
        msg.expedited,
    )
    return tx_pb2.MsgSubmitProposalResponse(proposal_id=proposal_id)


def validate_deposit(msg: tx_pb2.MsgDeposit) -> None:
    parse_address(msg.depositor, "depositor")
    if not msg.proposal_id:
        raise ErrInvalidRequest.wrap("proposal_id must be positive")
    if not coins_from_proto(msg.amount):
        raise ErrInvalidCoins.wrap("deposit amount must not be empty")


def handle_deposit(ctx: Context, k: GovKeeper, msg: tx_pb2.MsgDeposit) -> tx_pb2.MsgDepositResponse:
    k.deposit(ctx, msg.proposal_id, bech32.decode(msg.depositor), coins_from_proto(msg.amount))
    return tx_pb2.MsgDepositResponse()


def _validate_vote_common(msg: Any) -> None:
    parse_address(msg.voter, "voter")
    if not msg.proposal_id:
        raise ErrInvalidRequest.wrap("proposal_id must be positive")
    if len(msg.metadata) > MAX_METADATA_LEN:
        raise ErrMetadataTooLong.wrap(f"metadata is longer than {MAX_METADATA_LEN} characters")


def single_option(msg: tx_pb2.MsgVote) -> list[gov_pb2.WeightedVoteOption]:
    return [gov_pb2.WeightedVoteOption(option=msg.option, weight="1.000000000000000000")]


def validate_vote(msg: tx_pb2.MsgVote) -> None:
    _validate_vote_common(msg)
    if msg.option == gov_pb2.VOTE_OPTION_UNSPECIFIED:
        raise ErrInvalidVote.wrap("vote option must be yes, abstain, no or no_with_veto")
    parse_options(single_option(msg))


def validate_vote_weighted(msg: tx_pb2.MsgVoteWeighted) -> None:
    _validate_vote_common(msg)
    parse_options(msg.options)


def handle_vote(ctx: Context, k: GovKeeper, msg: tx_pb2.MsgVote) -> tx_pb2.MsgVoteResponse:
    k.vote(ctx, msg.proposal_id, bech32.decode(msg.voter), single_option(msg), msg.metadata)
    return tx_pb2.MsgVoteResponse()


def handle_vote_weighted(ctx: Context, k: GovKeeper, msg: tx_pb2.MsgVoteWeighted) -> tx_pb2.MsgVoteWeightedResponse:
    k.vote(ctx, msg.proposal_id, bech32.decode(msg.voter), list(msg.options), msg.metadata)
    return tx_pb2.MsgVoteWeightedResponse()


def validate_cancel(msg: tx_pb2.MsgCancelProposal) -> None:
    parse_address(msg.proposer, "proposer")
    if not msg.proposal_id:
        raise ErrInvalidRequest.wrap("proposal_id must be positive")


def handle_cancel(ctx: Context, k: GovKeeper, msg: tx_pb2.MsgCancelProposal) -> tx_pb2.MsgCancelProposalResponse:
    k.cancel_proposal(ctx, msg.proposal_id, bech32.decode(msg.proposer))
    reply = tx_pb2.MsgCancelProposalResponse(proposal_id=msg.proposal_id, canceled_height=ctx.header.height)
    reply.canceled_time.FromNanoseconds(ctx.header.time_ns)
    return reply


def routes(gov: GovKeeper, packed_signers: PackedSigners) -> dict[str, MsgRoute]:
    """``packed_signers``: the router's (sdk/baseapp/transactions.py), to check a proposal's messages at submission."""
    return {
        type_url(tx_pb2.MsgSubmitProposal): MsgRoute(
            tx_pb2.MsgSubmitProposal,
            lambda m: [parse_address(m.proposer, "proposer")],
            submit_validator(packed_signers, gov.authority),
            lambda ctx, m: handle_submit(ctx, gov, m),
        ),
        type_url(tx_pb2.MsgDeposit): MsgRoute(
            tx_pb2.MsgDeposit,
            lambda m: [parse_address(m.depositor, "depositor")],
            validate_deposit,
            lambda ctx, m: handle_deposit(ctx, gov, m),
        ),
        type_url(tx_pb2.MsgVote): MsgRoute(
            tx_pb2.MsgVote,
            lambda m: [parse_address(m.voter, "voter")],
            validate_vote,
            lambda ctx, m: handle_vote(ctx, gov, m),
        ),
        type_url(tx_pb2.MsgVoteWeighted): MsgRoute(
            tx_pb2.MsgVoteWeighted,
            lambda m: [parse_address(m.voter, "voter")],
            validate_vote_weighted,
            lambda ctx, m: handle_vote_weighted(ctx, gov, m),
        ),
        type_url(tx_pb2.MsgCancelProposal): MsgRoute(
            tx_pb2.MsgCancelProposal,
            lambda m: [parse_address(m.proposer, "proposer")],
            validate_cancel,
            lambda ctx, m: handle_cancel(ctx, gov, m),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, gov.authority, validate_params, gov.set_params
        ),
    }
