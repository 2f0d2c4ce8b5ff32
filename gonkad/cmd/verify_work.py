"""``gonkad verify-work INFERENCE_ID --node …``: whether a finished inference is proven by the chain, checked as a
light client from the genesis validator set (x/sprint README, "The epoch's proof"); one line, ``valid: …`` or
``invalid: why``, and exit status 1 when invalid."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from google.protobuf import json_format

from protogen.gonka.bls.v1 import bls_pb2
from sdk.cli.flags import add_query_flags
from sdk.client.querier import Querier
from sdk.crypto import bls
from x.sprint.client.epochproof import ProofError, fetch_genesis_set, verify_work


def cmd_verify_work(args: argparse.Namespace) -> None:
    try:
        inference_id = bytes.fromhex(args.inference_id)
    except ValueError:
        inference_id = b""
    if len(inference_id) != 32:
        raise ValueError(f"invalid inference id {args.inference_id!r}: expected 64 hex characters")
    querier = Querier(args.node, args.grpc_addr)
    backend = bls.fast_aggregate_verify
    if args.backend == "py_ecc":
        # imported here only: py_ecc raises the interpreter's recursion limit for the whole process
        from py_ecc.bls import G2ProofOfPossession

        backend = G2ProofOfPossession.FastAggregateVerify
    try:
        if args.genesis_set:
            genesis = json_format.ParseDict(
                json.loads(Path(args.genesis_set).read_text()), bls_pb2.ValidatorSetHandoff()
            )
        else:
            genesis = fetch_genesis_set(querier)
        line, epoch, height = verify_work(querier, inference_id, genesis, args.chain_id or "", backend)
    except (ProofError, Exception) as exc:  # noqa: BLE001 - a node's refusal (not found, pruned) is an answer too
        print(f"invalid: {exc}")
        sys.exit(1)
    print(f"valid: inference {inference_id.hex()} by {line.host} in epoch {epoch}, certified at height {height}")


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("verify-work", help="check a finished inference against the chain as a light client")
    p.add_argument("inference_id", metavar="INFERENCE_ID", help="64 hex characters")
    add_query_flags(p)
    p.add_argument("--chain-id", default=None, help="the chain's id (default: the node's)")
    p.add_argument(
        "--genesis-set",
        default=None,
        help="the genesis validator set (a ValidatorSetHandoff as JSON); default: the node's first handoff",
    )
    p.add_argument("--backend", choices=["blst", "py_ecc"], default="blst", help="the BLS implementation")
    p.set_defaults(func=cmd_verify_work)
