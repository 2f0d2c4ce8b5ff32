"""Proposals from the command line, as x/gov's ``submit-proposal`` reads them (the SDK's proposal file JSON)
and as other modules' commands submit their messages for a vote (the SDK's ``AddGovPropFlagsToCmd``: e.g.
``tx upgrade software-upgrade``)."""

from __future__ import annotations

import argparse
import copy
from typing import Any

from cosmpy.protos.cosmos.gov.v1 import tx_pb2
from google.protobuf import any_pb2, json_format

from sdk.cli.flags import add_tx_flags
from sdk.cli.tx import broadcast_messages
from sdk.coins import parse_coins
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY

PROPOSAL_KEYS = {"messages", "metadata", "deposit", "title", "summary", "expedited"}


def pack(message: Any, index: int) -> any_pb2.Any:
    if not isinstance(message, dict) or not isinstance(message.get("@type"), str):
        raise ValueError(f'messages[{index}] must be a JSON object with an "@type"')
    packed = any_pb2.Any()
    try:
        json_format.ParseDict(copy.deepcopy(message), packed)  # ParseDict consumes "@type"
    except (json_format.ParseError, TypeError, KeyError) as exc:
        detail = " ".join(str(exc).split())  # one line: protobuf's messages span several
        raise ValueError(f"messages[{index}] ({message['@type']}): {detail}") from None
    return packed


def proposal_from_json(data: Any, path: str, proposer: str, expedited: bool = False) -> tx_pb2.MsgSubmitProposal:
    """A proposal file's JSON (``path``: where it came from, for the errors) as a MsgSubmitProposal
    (expedited if the JSON or ``expedited`` says so); a malformed one is a ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object with messages, metadata, deposit, title, summary")
    unknown = sorted(set(data) - PROPOSAL_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown fields {', '.join(unknown)} (expected {', '.join(sorted(PROPOSAL_KEYS))})")
    messages = data.get("messages", [])
    if not isinstance(messages, list):
        raise ValueError(f'{path}: "messages" must be a list (empty for a text proposal)')
    for field in ("metadata", "title", "summary", "deposit"):
        if not isinstance(data.get(field, ""), str):
            raise ValueError(f'{path}: "{field}" must be a string')
    if not isinstance(data.get("expedited", False), bool):
        raise ValueError(f'{path}: "expedited" must be true or false')
    deposit = parse_coins(data["deposit"]) if data.get("deposit") else None
    return tx_pb2.MsgSubmitProposal(
        messages=[pack(m, i) for i, m in enumerate(messages)],
        proposer=proposer,
        initial_deposit=deposit.to_proto() if deposit else [],
        metadata=data.get("metadata", ""),
        title=data.get("title", ""),
        summary=data.get("summary", ""),
        expedited=expedited or data.get("expedited", False),
    )


def add_proposal_flags(parser: argparse.ArgumentParser, title: str) -> None:
    """The flags of a command that submits its message as a proposal; ``title``: the default title and
    summary."""
    parser.add_argument("--title", default=title)
    parser.add_argument("--summary", default=title)
    parser.add_argument("--metadata", default="")
    parser.add_argument("--deposit", default="", help="the initial deposit, e.g. 100000000000ngonka")
    parser.add_argument("--expedited", action="store_true", help="an expedited proposal")
    add_tx_flags(parser)


def submit_as_proposal(args: argparse.Namespace, messages: list[dict[str, Any]]) -> None:
    """Broadcast a proposal of ``messages`` (proposal-file JSON, each with its ``@type`` and the gov authority
    as its signer), titled and funded by ``add_proposal_flags``'s flags."""
    data = {
        "messages": messages,
        "metadata": args.metadata,
        "deposit": args.deposit,
        "title": args.title,
        "summary": args.summary,
    }
    proposal_from_json(data, "the proposal", bech32.encode(GOV_AUTHORITY))  # checked before opening the keyring
    broadcast_messages(args, lambda proposer: [proposal_from_json(data, "the proposal", proposer, args.expedited)])
