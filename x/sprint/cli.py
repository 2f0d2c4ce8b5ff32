"""``gonkad tx sprint commit|validate|update-params`` and ``gonkad query sprint params|race|commitments|validations|
weights|epoch-proof``. A host's program sends commitments and validations by itself (host/README.md); these
commands are for operators and tests."""

from __future__ import annotations

import argparse

from protogen.gonka.sprint.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.services import gonka
from x.sprint.client.queries import commit_message, validation_message


def hex_bytes(text: str, what: str) -> bytes:
    """Hex text as bytes; a ValueError naming ``what`` (one ``Error:`` line) otherwise."""
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"invalid {what} {text!r}: expected hex") from None


def uint(text: str, what: str) -> int:
    """A non-negative integer; a ValueError naming ``what`` (one ``Error:`` line) otherwise."""
    if not text.isdigit():
        raise ValueError(f"invalid {what} {text!r}: expected a non-negative integer")
    return int(text)


def cmd_commit(args: argparse.Namespace) -> None:
    epoch, count = uint(args.epoch, "epoch"), uint(args.count, "count")
    root, params_hash = hex_bytes(args.root, "root"), hex_bytes(args.params_hash, "params hash")
    broadcast_messages(args, lambda host: [commit_message(host, epoch, root, count, params_hash)])


def cmd_validate(args: argparse.Namespace) -> None:
    epoch, samples, failures = uint(args.epoch, "epoch"), uint(args.samples, "samples"), uint(args.failures, "failures")
    broadcast_messages(args, lambda validator: [validation_message(validator, epoch, args.host, samples, failures)])


def register_tx(modules: argparse._SubParsersAction) -> None:
    sprint = modules.add_parser("sprint", help="the Sprint race").add_subparsers(dest="sprint_command", required=True)
    p = sprint.add_parser("commit", help="commit race proofs: commit EPOCH ROOT_HEX COUNT PARAMS_HASH_HEX")
    p.add_argument("epoch")
    p.add_argument("root")
    p.add_argument("count")
    p.add_argument("params_hash")
    add_tx_flags(p)
    p.set_defaults(func=cmd_commit)
    p = sprint.add_parser("validate", help="a verdict on a host: validate EPOCH HOST SAMPLES FAILURES")
    p.add_argument("epoch")
    p.add_argument("host")
    p.add_argument("samples")
    p.add_argument("failures")
    add_tx_flags(p)
    p.set_defaults(func=cmd_validate)
    add_update_params_command(sprint, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    sprint = modules.add_parser("sprint", help="the Sprint race").add_subparsers(dest="sprint_command", required=True)
    query = gonka("sprint").query
    commands = (
        ("params", "the race's params", "Params", query_pb2.QueryParamsRequest, query_pb2.QueryParamsResponse, ()),
        ("race", "an epoch's seed and sample randomness", "Race", query_pb2.QueryRaceRequest,
         query_pb2.QueryRaceResponse, ("epoch",)),
        ("commitments", "an epoch's commitments", "Commitments", query_pb2.QueryCommitmentsRequest,
         query_pb2.QueryCommitmentsResponse, ("epoch",)),
        ("validations", "an epoch's validations", "Validations", query_pb2.QueryValidationsRequest,
         query_pb2.QueryValidationsResponse, ("epoch",)),
        ("weights", "the race's decision for an epoch: each host's outcome and weight", "Weights",
         query_pb2.QueryWeightsRequest, query_pb2.QueryWeightsResponse, ("epoch",)),
        ("epoch-proof", "an epoch's summary with the certificate and handoffs that prove it", "EpochProof",
         query_pb2.QueryEpochProofRequest, query_pb2.QueryEpochProofResponse, ("epoch",)),
    )  # fmt: skip
    for name, help_text, method, request, response, fields in commands:
        add_module_query(sprint, name, help_text, query + method, request, response, fields)
