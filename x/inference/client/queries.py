"""x/inference's queries and messages as programs build them: what the TA and the host send and read."""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.client.rpc import RPCError, RPCNotFound
from sdk.services import gonka
from x.inference.client.chain_types import Finish, StartRequest
from x.inference.types import verify_threshold as threshold_of

QUERY = gonka("inference").query


def inference(querier: Querier, inference_id: bytes) -> inference_pb2.Inference | None:
    """The committed record; None when the chain does not know the id (or the node cannot tell)."""
    try:
        return querier.query(
            QUERY + "Inference",
            query_pb2.QueryInferenceRequest(id=inference_id.hex()),
            query_pb2.QueryInferenceResponse,
        ).inference
    except RPCError:
        return None


def verify_threshold(querier: Querier, model_id: str) -> int:
    """The score in parts per million at or above which a re-execution of ``model_id``'s answers matches, as x/poc
    judges a verdict: the model's own threshold, or the default for one the chain does not know. ``RPCError`` when
    the node cannot tell (the caller asks again)."""
    try:
        found = querier.query(QUERY + "Model", query_pb2.QueryModelRequest(id=model_id), query_pb2.QueryModelResponse)
    except RPCNotFound:
        return threshold_of(None)
    return threshold_of(found.model)


def models(querier: Querier, page_limit: int = 100) -> list[inference_pb2.Model]:
    """Every registered model, in id order (all pages)."""
    found: list[inference_pb2.Model] = []
    key = b""
    while True:
        page = querier.query(
            QUERY + "Models",
            query_pb2.QueryModelsRequest(pagination={"key": key, "limit": page_limit}),
            query_pb2.QueryModelsResponse,
        )
        found.extend(page.models)
        key = page.pagination.next_key
        if not key:
            return found


def node_urls(querier: Querier, operator: str) -> list[str]:
    """The URLs ``operator`` registered for its nodes: its executor proxies, where other hosts reach it."""
    got = querier.query(QUERY + "Nodes", query_pb2.QueryNodesRequest(operator=operator), query_pb2.QueryNodesResponse)
    return [node.url for node in got.nodes if node.operator == operator and node.url]


def start_message(ta: str, request: StartRequest) -> tx_pb2.MsgStartInference | tx_pb2.MsgReassignInference:
    """What ``request`` becomes on chain, sent by the TA ``ta``: a start, or the reassignment of the inference to a
    new executor."""
    if request.reassign:
        return tx_pb2.MsgReassignInference(
            ta=ta,
            id=request.inference_id,
            executor=request.executor,
            release=request.release[33:],
            release_pubkey=request.release[:33],
        )
    return tx_pb2.MsgStartInference(
        ta=ta,
        requester=request.requester,
        requester_pubkey=request.requester_pubkey,
        body_hash=request.body_hash,
        timestamp_ns=request.timestamp_ns,
        signature=request.signature,
        model=request.model,
        max_tokens=request.max_tokens,
        fee_per_token=request.fee_per_token,
        executor=request.executor,
        seed=request.seed,
        params_hash=request.params_hash,
    )


def finish_message(executor: str, finish: Finish, max_tokens: int) -> tx_pb2.MsgFinishInference:
    """The executor's ``MsgFinishInference`` for ``finish``, its completion capped at the escrowed ``max_tokens``."""
    return tx_pb2.MsgFinishInference(
        executor=executor,
        id=finish.inference_id,
        response_hash=finish.response_hash,
        prompt_tokens=finish.prompt_tokens,
        completion_tokens=min(finish.completion_tokens, max_tokens),
        logprobs_digest=finish.logprobs_digest,
    )
