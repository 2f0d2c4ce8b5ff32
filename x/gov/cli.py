"""``gonkad tx gov …`` and ``gonkad query gov …``, in the Cosmos SDK's shape.

``submit-proposal FILE`` reads the SDK's proposal JSON::

    {"messages": [{"@type": "/gonka.epochs.v1.MsgUpdateParams", "authority": "gonka10d07y…", "params": {…}}],
     "metadata": "", "deposit": "100000000000ngonka", "title": "…", "summary": "…", "expedited": false}

Each message is proto3 JSON with its ``@type``; its signer field must be the gov authority (``query gov
params`` does not show it: ``gonkad query auth module-account gov``, or ``draft-proposal`` fills it in).
No messages (``"messages": []`` or none) is a text proposal; ``--expedited`` (or ``"expedited": true``)
submits an expedited one.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cosmpy.protos.cosmos.gov.v1 import gov_pb2, query_pb2, tx_pb2
from google.protobuf import json_format, symbol_database

from sdk.cli.flags import add_query_flags, add_tx_flags, print_output, shown_dict
from sdk.cli.jsonfile import read_json_file
from sdk.cli.params import add_update_params_command
from sdk.cli.proposal import proposal_from_json
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.client.querier import Querier
from sdk.coins import parse_coins
from sdk.crypto import bech32
from sdk.dec import legacy_dec_text, parse_dec
from sdk.params import GOV_AUTHORITY
from sdk.services import cosmos

OPTIONS = {
    "yes": gov_pb2.VOTE_OPTION_YES,
    "no": gov_pb2.VOTE_OPTION_NO,
    "abstain": gov_pb2.VOTE_OPTION_ABSTAIN,
    "no_with_veto": gov_pb2.VOTE_OPTION_NO_WITH_VETO,
}
DRAFT_FILE = "draft_proposal.json"


def vote_option(text: str) -> int:
    key = text.strip().lower().removeprefix("vote_option_")
    if key not in OPTIONS:
        raise ValueError(f"vote option {text!r}: expected one of {', '.join(OPTIONS)}")
    return OPTIONS[key]


def weighted_options(text: str) -> list[gov_pb2.WeightedVoteOption]:
    """``yes=0.6,no=0.4`` → weighted options (LegacyDec text; the chain checks they sum to 1)."""
    options = []
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        if not sep:
            raise ValueError(f"weighted vote {part!r}: expected OPTION=WEIGHT, e.g. yes=0.6,no=0.4")
        options.append(
            gov_pb2.WeightedVoteOption(
                option=vote_option(name), weight=legacy_dec_text(parse_dec(weight.strip(), "weight"))
            )
        )
    return options


def proposal_id(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"proposal id {text!r} must be a positive whole number")
    return int(text)


def read_proposal(path: str, proposer: str, expedited: bool = False) -> tx_pb2.MsgSubmitProposal:
    """The SDK's proposal file as a MsgSubmitProposal (expedited if the file or ``expedited`` says so); a
    malformed one is a ValueError naming what is wrong."""
    return proposal_from_json(read_json_file(path), path, proposer, expedited)


def cmd_submit(args: argparse.Namespace) -> None:
    read_proposal(args.proposal_file, bech32.encode(GOV_AUTHORITY))  # check the file before opening the keyring
    broadcast_messages(args, lambda proposer: [read_proposal(args.proposal_file, proposer, args.expedited)])


def cmd_cancel(args: argparse.Namespace) -> None:
    pid = proposal_id(args.proposal_id)
    broadcast_messages(args, lambda proposer: [tx_pb2.MsgCancelProposal(proposal_id=pid, proposer=proposer)])


def cmd_deposit(args: argparse.Namespace) -> None:
    pid, coins = proposal_id(args.proposal_id), parse_coins(args.amount)
    broadcast_messages(
        args, lambda depositor: [tx_pb2.MsgDeposit(proposal_id=pid, depositor=depositor, amount=coins.to_proto())]
    )


def cmd_vote(args: argparse.Namespace) -> None:
    pid, option = proposal_id(args.proposal_id), vote_option(args.option)
    broadcast_messages(
        args, lambda voter: [tx_pb2.MsgVote(proposal_id=pid, voter=voter, option=option, metadata=args.metadata)]
    )


def cmd_weighted_vote(args: argparse.Namespace) -> None:
    pid, options = proposal_id(args.proposal_id), weighted_options(args.options)
    broadcast_messages(
        args,
        lambda voter: [tx_pb2.MsgVoteWeighted(proposal_id=pid, voter=voter, options=options, metadata=args.metadata)],
    )


def cmd_draft(args: argparse.Namespace) -> None:
    """A proposal file to edit: one message of ``--msg-type`` with its fields at their defaults and its
    ``authority`` set to the gov authority."""
    type_url = "/" + args.msg_type.lstrip("/")
    try:
        msg_class = symbol_database.Default().GetSymbol(type_url[1:])
    except KeyError:
        raise ValueError(f"unknown message type {type_url}") from None
    template = msg_class()
    for field in msg_class.DESCRIPTOR.fields:
        if field.message_type is not None and field.label != field.LABEL_REPEATED:
            getattr(template, field.name).SetInParent()  # e.g. "params": {…} with every field shown
    message = json_format.MessageToDict(
        template, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    if "authority" in msg_class.DESCRIPTOR.fields_by_name:
        message["authority"] = bech32.encode(GOV_AUTHORITY)
    draft = {
        "messages": [{"@type": type_url, **message}],
        "metadata": "",
        "deposit": args.deposit,
        "title": args.title,
        "summary": args.summary,
    }
    out = Path(args.output_file)
    if out.exists() and not args.overwrite:
        raise ValueError(f"{out} exists; pass --overwrite to replace it")
    out.write_text(json.dumps(draft, indent=2) + "\n")
    print(json.dumps({"written": str(out)}))


def register_tx(modules: argparse._SubParsersAction) -> None:
    gov = modules.add_parser("gov", help="governance: proposals, deposits, votes").add_subparsers(
        dest="gov_command", required=True
    )
    p = gov.add_parser("submit-proposal", help="submit a proposal: submit-proposal PROPOSAL.json")
    p.add_argument("proposal_file")
    p.add_argument("--expedited", action="store_true", help="an expedited proposal (its own period and threshold)")
    add_tx_flags(p)
    p.set_defaults(func=cmd_submit)
    p = gov.add_parser("cancel-proposal", help="cancel your proposal while in deposit or voting: cancel-proposal ID")
    p.add_argument("proposal_id")
    add_tx_flags(p)
    p.set_defaults(func=cmd_cancel)
    p = gov.add_parser("deposit", help="deposit on a proposal: deposit ID AMOUNT")
    p.add_argument("proposal_id")
    p.add_argument("amount", help="e.g. 100000000000ngonka")
    add_tx_flags(p)
    p.set_defaults(func=cmd_deposit)
    p = gov.add_parser("vote", help="vote (validators only): vote ID yes|no|abstain|no_with_veto")
    p.add_argument("proposal_id")
    p.add_argument("option")
    p.add_argument("--metadata", default="")
    add_tx_flags(p)
    p.set_defaults(func=cmd_vote)
    p = gov.add_parser("weighted-vote", help="split a vote: weighted-vote ID yes=0.6,no=0.4")
    p.add_argument("proposal_id")
    p.add_argument("options")
    p.add_argument("--metadata", default="")
    add_tx_flags(p)
    p.set_defaults(func=cmd_weighted_vote)
    p = gov.add_parser("draft-proposal", help=f"write a proposal template ({DRAFT_FILE})")
    p.add_argument("--msg-type", default="/gonka.epochs.v1.MsgUpdateParams", help="the message to propose")
    p.add_argument("--title", default="")
    p.add_argument("--summary", default="")
    p.add_argument("--deposit", default="100000000000ngonka")
    p.add_argument("--output-file", default=DRAFT_FILE)
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_draft)
    add_update_params_command(gov, tx_pb2.MsgUpdateParams)


def cmd_proposals(args: argparse.Namespace) -> None:
    query = cosmos("gov", "v1").query
    request = query_pb2.QueryProposalsRequest(voter=args.voter, depositor=args.depositor)
    if args.status:
        name = "PROPOSAL_STATUS_" + args.status.upper().removeprefix("PROPOSAL_STATUS_")
        if name not in gov_pb2.ProposalStatus.keys():
            raise ValueError(f"status {args.status!r}: deposit_period, voting_period, passed, rejected or failed")
        request.proposal_status = gov_pb2.ProposalStatus.Value(name)
    request.pagination.limit = args.limit
    request.pagination.offset = args.offset
    reply = Querier(args.node, args.grpc_addr).query(query + "Proposals", request, query_pb2.QueryProposalsResponse)
    print_output(args.output, shown_dict(reply))


def register_query(modules: argparse._SubParsersAction) -> None:
    query = cosmos("gov", "v1").query
    gov = modules.add_parser("gov", help="governance").add_subparsers(dest="gov_command", required=True)
    _add_proposal_queries(gov, query)
    _add_vote_queries(gov, query)
    _add_deposit_queries(gov, query)
    add_module_query(
        gov,
        "tally",
        "the tally (live while voting, final after)",
        query + "TallyResult",
        query_pb2.QueryTallyResultRequest,
        query_pb2.QueryTallyResultResponse,
        ["proposal_id"],
    )
    add_module_query(
        gov,
        "params",
        "the governance params",
        query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )


def _add_proposal_queries(gov: argparse._SubParsersAction, query: str) -> None:
    """One proposal by id, or many by status, voter or depositor."""
    add_module_query(
        gov,
        "proposal",
        "one proposal",
        query + "Proposal",
        query_pb2.QueryProposalRequest,
        query_pb2.QueryProposalResponse,
        ["proposal_id"],
    )
    p = gov.add_parser("proposals", help="proposals, by status, voter, depositor")
    p.add_argument("--status", default="", help="deposit_period, voting_period, passed, rejected, failed")
    p.add_argument("--voter", default="")
    p.add_argument("--depositor", default="")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--offset", type=int, default=0)
    add_query_flags(p)
    p.set_defaults(func=cmd_proposals)


def _add_vote_queries(gov: argparse._SubParsersAction, query: str) -> None:
    """A proposal's votes, one voter's or all."""
    add_module_query(
        gov,
        "vote",
        "one voter's vote",
        query + "Vote",
        query_pb2.QueryVoteRequest,
        query_pb2.QueryVoteResponse,
        ["proposal_id", "voter"],
    )
    add_module_query(
        gov,
        "votes",
        "a proposal's votes",
        query + "Votes",
        query_pb2.QueryVotesRequest,
        query_pb2.QueryVotesResponse,
        ["proposal_id"],
    )


def _add_deposit_queries(gov: argparse._SubParsersAction, query: str) -> None:
    """A proposal's deposits, one depositor's or all."""
    add_module_query(
        gov,
        "deposit",
        "one depositor's deposit",
        query + "Deposit",
        query_pb2.QueryDepositRequest,
        query_pb2.QueryDepositResponse,
        ["proposal_id", "depositor"],
    )
    add_module_query(
        gov,
        "deposits",
        "a proposal's deposits",
        query + "Deposits",
        query_pb2.QueryDepositsRequest,
        query_pb2.QueryDepositsResponse,
        ["proposal_id"],
    )
