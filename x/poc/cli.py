"""``gonkad tx poc validate|update-params`` and ``gonkad query poc params|validation|host|assigned|hosts``. A
validator host's program sends its verdicts by itself; these commands are for operators and tests."""

from __future__ import annotations

import argparse

from protogen.gonka.poc.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.services import gonka
from x.poc.client.queries import VERDICTS, validate_message


def hex_id(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not hex") from None


def cmd_validate(args: argparse.Namespace) -> None:
    broadcast_messages(
        args, lambda validator: [validate_message(validator, args.inference_id, VERDICTS[args.verdict], args.score)]
    )


def register_tx(modules: argparse._SubParsersAction) -> None:
    poc = modules.add_parser("poc", help="PoC V2: sampled re-execution").add_subparsers(
        dest="poc_command", required=True
    )
    p = poc.add_parser("validate", help="a verdict on a selected inference: validate ID_HEX match|mismatch SCORE_PPM")
    p.add_argument("inference_id", type=hex_id)
    p.add_argument("verdict", choices=sorted(VERDICTS))
    p.add_argument("score", type=int, help="similarity in parts per million (0 … 1000000)")
    add_tx_flags(p)
    p.set_defaults(func=cmd_validate)
    add_update_params_command(poc, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    poc = modules.add_parser("poc", help="PoC V2: sampled re-execution").add_subparsers(
        dest="poc_command", required=True
    )
    query = gonka("poc").query
    commands = (
        ("params", "the sampling's params", "Params", query_pb2.QueryParamsRequest, query_pb2.QueryParamsResponse, ()),
        ("validation", "an inference's selection, validator, deadline, verdict and dispute", "Validation",
         query_pb2.QueryValidationRequest, query_pb2.QueryValidationResponse, ("inference_id",)),
        ("host", "a host's status, reputation and counts", "Host", query_pb2.QueryHostRequest,
         query_pb2.QueryHostResponse, ("address",)),
        ("assigned", "the selected inferences awaiting a validator's verdict or vote", "Assigned",
         query_pb2.QueryAssignedRequest, query_pb2.QueryAssignedResponse, ("validator",)),
        ("hosts", "the hosts of a status: HOST_STATUS_INVALID or HOST_STATUS_ACTIVE", "Hosts",
         query_pb2.QueryHostsRequest, query_pb2.QueryHostsResponse, ("status",)),
    )  # fmt: skip
    for name, help_text, method, request, response, fields in commands:
        add_module_query(poc, name, help_text, query + method, request, response, fields)
