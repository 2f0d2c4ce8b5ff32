"""One generic ``gonkad query <module> <name> ARGS…``: positional arguments fill the request's fields, the
reply is printed whole (``--output json|text``). Most module queries need nothing more."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from google.protobuf import json_format
from google.protobuf.message import Message

from sdk.cli.flags import add_query_flags, print_output, shown_dict
from sdk.client.querier import Querier


def add_module_query(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    path: str,
    request_type: type[Message],
    response_type: type[Message],
    fields: Sequence[str] = (),
) -> argparse.ArgumentParser:
    """A query command whose positionals are the request's ``fields``, in order (their text is parsed as
    the field's JSON value, so a bad number is one ``Error:`` line)."""
    parser = commands.add_parser(name, help=help_text)
    for field in fields:
        parser.add_argument(field, metavar=field.upper())
    add_query_flags(parser)

    def run(args: argparse.Namespace) -> None:
        try:
            request = json_format.ParseDict({f: getattr(args, f) for f in fields}, request_type())
        except json_format.ParseError as exc:
            raise ValueError(str(exc)) from None
        reply = Querier(args.node, args.grpc_addr).query(path, request, response_type)
        print_output(args.output, shown_dict(reply))

    parser.set_defaults(func=run)
    return parser
