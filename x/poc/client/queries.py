"""x/poc's queries and messages as a host's program builds them (the validator's duties)."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2, query_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.services import gonka

QUERY = gonka("poc").query
VERDICTS: dict[str, poc_pb2.Verdict] = {"match": poc_pb2.VERDICT_MATCH, "mismatch": poc_pb2.VERDICT_MISMATCH}


def params(querier: Querier) -> poc_pb2.Params:
    return querier.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params


def validation(querier: Querier, inference_id: bytes) -> poc_pb2.Validation:
    return querier.query(
        QUERY + "Validation",
        query_pb2.QueryValidationRequest(inference_id=inference_id.hex()),
        query_pb2.QueryValidationResponse,
    ).validation


def host(querier: Querier, address: str) -> query_pb2.QueryHostResponse:
    return querier.query(QUERY + "Host", query_pb2.QueryHostRequest(address=address), query_pb2.QueryHostResponse)


def assigned(querier: Querier, validator: str) -> list[poc_pb2.Validation]:
    """The selected inferences awaiting ``validator``'s verdict and the disputes awaiting its vote, earliest
    deadline first."""
    return list(
        querier.query(
            QUERY + "Assigned", query_pb2.QueryAssignedRequest(validator=validator), query_pb2.QueryAssignedResponse
        ).validations
    )


def validate_message(
    validator: str, inference_id: bytes, verdict: poc_pb2.Verdict, score: int
) -> tx_pb2.MsgValidateInference:
    """``verdict``: ``poc_pb2.VERDICT_MATCH`` or ``VERDICT_MISMATCH``; ``score`` in parts per million."""
    return tx_pb2.MsgValidateInference(inference_id=inference_id, validator=validator, verdict=verdict, score=score)


def hosts(querier: Querier, status: poc_pb2.HostStatus = poc_pb2.HOST_STATUS_UNSPECIFIED) -> list[poc_pb2.HostRecord]:
    """The hosts' records with ``status`` (every record when unspecified), in address order."""
    return list(
        querier.query(QUERY + "Hosts", query_pb2.QueryHostsRequest(status=status), query_pb2.QueryHostsResponse).hosts
    )
