"""``gonkad tx <module> update-params PARAMS.json --from KEY``: one command for every module's
``MsgUpdateParams``, signed by the key given, which must be the chain's authority for the chain to accept it."""

from __future__ import annotations

import argparse
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from sdk.cli.flags import add_tx_flags
from sdk.cli.jsonfile import read_json_object
from sdk.cli.tx import broadcast_messages
from sdk.client.tx import TxError


def update_params_message(msg_type: type[Message], authority: str, params: dict[str, Any]) -> Message:
    """The message with ``authority`` and the params JSON: under ``params`` for most modules, the message's
    own fields (``block``, ``evidence``, ``validator``, ``abci``) for x/consensus."""
    fields = {"params": params} if "params" in msg_type.DESCRIPTOR.fields_by_name else params
    try:
        return json_format.ParseDict({**fields, "authority": authority}, msg_type())
    except json_format.ParseError as exc:
        raise TxError(f"params file does not fit {msg_type.DESCRIPTOR.full_name}: {exc}") from None


def add_update_params_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], msg_type: type[Message]
) -> None:
    """Register ``update-params`` under a module's ``tx`` commands."""
    p = commands.add_parser("update-params", help="replace the module's params (the authority signs): PARAMS.json")
    p.add_argument("params_file", help="the params as JSON (proto3 JSON field names)")
    add_tx_flags(p)

    def run(args: argparse.Namespace) -> None:
        params = read_json_object(args.params_file)
        broadcast_messages(args, lambda sender: [update_params_message(msg_type, sender, params)])

    p.set_defaults(func=run)
