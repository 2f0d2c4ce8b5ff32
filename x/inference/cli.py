"""``gonkad tx inference register-node|remove-node|register-model|update-params`` and ``gonkad query inference
models|model ID|nodes|inference ID|inferences|work EPOCH HOST|block-work HEIGHT|work-proof ID|params``.

Starting and finishing inferences are the Transfer Agent's and the ML node host's messages, sent by those
programs, not typed by hand. Values are parsed in the commands, so bad input is one ``Error:`` line.
"""

from __future__ import annotations

import argparse

from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.cli.flags import add_query_flags, add_tx_flags, print_output, shown_dict
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.client.querier import Querier
from sdk.services import gonka
from x.inference.msg_server import model_id
from x.inference.types import DEFAULT_VERIFY_THRESHOLD, MAX_VERIFY_THRESHOLD


def parse_uint(text: str, what: str) -> int:
    if not text.isdigit() or int(text) >= 1 << 64:
        raise ValueError(f"invalid {what} {text!r}: expected a whole number below 2^64")
    return int(text)


def cmd_register_node(args: argparse.Namespace) -> None:
    models = [m for m in args.models.split(",") if m]
    memory = parse_uint(args.memory_bytes, "--memory-bytes")
    bandwidth = parse_uint(args.bandwidth, "--bandwidth")
    concurrency = parse_uint(args.max_concurrency, "--max-concurrency")
    broadcast_messages(
        args,
        lambda operator: [
            tx_pb2.MsgRegisterNode(
                operator=operator,
                node_id=args.node_id,
                url=args.url,
                models=models,
                memory_bytes=memory,
                bandwidth_bytes_per_s=bandwidth,
                max_concurrency=concurrency,
            )
        ],
    )


def cmd_remove_node(args: argparse.Namespace) -> None:
    broadcast_messages(args, lambda operator: [tx_pb2.MsgRemoveNode(operator=operator, node_id=args.node_id)])


def cmd_register_model(args: argparse.Namespace) -> None:
    context = parse_uint(args.context_length, "--context-length")
    price = parse_uint(args.price_per_token, "--price-per-token")
    threshold = parse_uint(args.verify_threshold, "--verify-threshold")
    if threshold > MAX_VERIFY_THRESHOLD:  # the chain's rule (validate_model), said before the uint32 overflows
        raise ValueError(f"invalid --verify-threshold {threshold}: at most {MAX_VERIFY_THRESHOLD} (parts per million)")
    model = inference_pb2.Model(
        id=model_id(args.name, args.weights_sha256),
        name=args.name,
        weights_sha256=args.weights_sha256,
        context_length=context,
        price_per_token=price,
        verify_threshold=threshold,
        source_url=args.source_url,
    )
    broadcast_messages(args, lambda authority: [tx_pb2.MsgRegisterModel(authority=authority, model=model)])


def register_tx(modules: argparse._SubParsersAction) -> None:
    inference = modules.add_parser("inference", help="the inference network").add_subparsers(
        dest="inference_command", required=True
    )
    p = inference.add_parser("register-node", help="register (or replace) one of your ML nodes: NODE_ID URL")
    p.add_argument("node_id", help="1-32 characters of [a-z0-9-]")
    p.add_argument("url", help="the node's http(s) base URL")
    p.add_argument("--models", required=True, help="comma-separated registered model ids (name@sha256:HEX)")
    p.add_argument("--memory-bytes", default="0")
    p.add_argument("--bandwidth", default="0", help="bytes per second")
    p.add_argument("--max-concurrency", default="1")
    add_tx_flags(p)
    p.set_defaults(func=cmd_register_node)
    p = inference.add_parser("remove-node", help="remove one of your ML nodes: NODE_ID")
    p.add_argument("node_id")
    add_tx_flags(p)
    p.set_defaults(func=cmd_remove_node)
    p = inference.add_parser(
        "register-model",
        help="register or update a model (the authority signs; "
        "normally inside a governance proposal): NAME WEIGHTS_SHA256",
    )
    p.add_argument("name")
    p.add_argument("weights_sha256")
    p.add_argument("--context-length", required=True)
    p.add_argument("--price-per-token", required=True, help="ngonka per token")
    p.add_argument(
        "--verify-threshold",
        default="0",
        help="the score (parts per million) at or above which a re-execution of its answers matches; "
        f"0: the default, {DEFAULT_VERIFY_THRESHOLD}",
    )
    p.add_argument(
        "--source-url", default="", help="where hosts that opt in fetch it: a host's http(s)://…/models/SHA256"
    )
    add_tx_flags(p)
    p.set_defaults(func=cmd_register_model)
    add_update_params_command(inference, tx_pb2.MsgUpdateParams)


def _query(path: str, request: object, response_type: type, args: argparse.Namespace) -> None:
    reply = Querier(args.node, args.grpc_addr).query(path, request, response_type)  # type: ignore[arg-type]
    print_output(args.output, shown_dict(reply))


def cmd_nodes(args: argparse.Namespace) -> None:
    query = gonka("inference").query
    _query(
        query + "Nodes",
        query_pb2.QueryNodesRequest(model=args.model or "", operator=args.operator or ""),
        query_pb2.QueryNodesResponse,
        args,
    )


def cmd_inferences(args: argparse.Namespace) -> None:
    query = gonka("inference").query
    if bool(args.requester) == bool(args.executor):
        raise ValueError("give exactly one of --requester and --executor")
    _query(
        query + "Inferences",
        query_pb2.QueryInferencesRequest(requester=args.requester or "", executor=args.executor or ""),
        query_pb2.QueryInferencesResponse,
        args,
    )


def register_query(modules: argparse._SubParsersAction) -> None:
    query = gonka("inference").query
    inference = modules.add_parser("inference", help="models, ML nodes, inferences and work").add_subparsers(
        dest="inference_command", required=True
    )
    _add_model_queries(inference, query)
    _add_inference_queries(inference, query)
    _add_work_queries(inference, query)


def _add_model_queries(inference: argparse._SubParsersAction, query: str) -> None:
    """The params, the models and the ML nodes that serve them."""
    add_module_query(
        inference,
        "params",
        "the inference params",
        query + "Params",
        query_pb2.QueryParamsRequest,
        query_pb2.QueryParamsResponse,
    )
    add_module_query(
        inference,
        "models",
        "the registered models",
        query + "Models",
        query_pb2.QueryModelsRequest,
        query_pb2.QueryModelsResponse,
    )
    add_module_query(
        inference,
        "model",
        "one model by id (name@sha256:HEX)",
        query + "Model",
        query_pb2.QueryModelRequest,
        query_pb2.QueryModelResponse,
        ["id"],
    )
    p = inference.add_parser("nodes", help="registered ML nodes (optionally --model / --operator)")
    p.add_argument("--model", default=None)
    p.add_argument("--operator", default=None)
    add_query_flags(p)
    p.set_defaults(func=cmd_nodes)


def _add_inference_queries(inference: argparse._SubParsersAction, query: str) -> None:
    """Inferences, one by id or by their requester or executor."""
    add_module_query(
        inference,
        "inference",
        "one inference by id (64 hex)",
        query + "Inference",
        query_pb2.QueryInferenceRequest,
        query_pb2.QueryInferenceResponse,
        ["id"],
    )
    p = inference.add_parser("inferences", help="inferences by --requester or --executor, in start order")
    p.add_argument("--requester", default=None)
    p.add_argument("--executor", default=None)
    add_query_flags(p)
    p.set_defaults(func=cmd_inferences)


def _add_work_queries(inference: argparse._SubParsersAction, query: str) -> None:
    """The work the hosts reported, by epoch and by block, and a finished inference's proof of it."""
    add_module_query(
        inference,
        "work",
        "a host's work in an epoch: units, count, root",
        query + "EpochWork",
        query_pb2.QueryEpochWorkRequest,
        query_pb2.QueryEpochWorkResponse,
        ["epoch", "host"],
    )
    add_module_query(
        inference,
        "block-work",
        "the work root of a block",
        query + "BlockWork",
        query_pb2.QueryBlockWorkRequest,
        query_pb2.QueryBlockWorkResponse,
        ["height"],
    )
    add_module_query(
        inference,
        "work-proof",
        "a finished inference's leaf and proof into its epoch root",
        query + "WorkProof",
        query_pb2.QueryWorkProofRequest,
        query_pb2.QueryWorkProofResponse,
        ["id"],
    )
