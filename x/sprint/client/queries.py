"""x/sprint's queries and messages as a host's program builds them (host/README.md, the race duties)."""

from __future__ import annotations

from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.services import gonka

QUERY = gonka("sprint").query


def params(querier: Querier) -> sprint_pb2.Params:
    return querier.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params


def race(querier: Querier, epoch: int) -> sprint_pb2.Race:
    """``epoch``'s seed and sample randomness; empty bytes for what the chain has not fixed yet."""
    return querier.query(QUERY + "Race", query_pb2.QueryRaceRequest(epoch=epoch), query_pb2.QueryRaceResponse).race


def commitments(querier: Querier, epoch: int) -> list[sprint_pb2.Commitment]:
    return list(
        querier.query(
            QUERY + "Commitments", query_pb2.QueryCommitmentsRequest(epoch=epoch), query_pb2.QueryCommitmentsResponse
        ).commitments
    )


def validations(querier: Querier, epoch: int, host: str = "") -> list[sprint_pb2.Validation]:
    return list(
        querier.query(
            QUERY + "Validations",
            query_pb2.QueryValidationsRequest(epoch=epoch, host=host),
            query_pb2.QueryValidationsResponse,
        ).validations
    )


def weights(querier: Querier, epoch: int) -> sprint_pb2.EpochResult:
    return querier.query(
        QUERY + "Weights", query_pb2.QueryWeightsRequest(epoch=epoch), query_pb2.QueryWeightsResponse
    ).result


def commit_message(host: str, epoch: int, root: bytes, count: int, params_hash: bytes) -> tx_pb2.MsgSprintCommit:
    return tx_pb2.MsgSprintCommit(host=host, epoch=epoch, root=root, count=count, params_hash=params_hash)


def validation_message(
    validator: str, epoch: int, host: str, samples: int, failures: int
) -> tx_pb2.MsgSprintValidation:
    return tx_pb2.MsgSprintValidation(validator=validator, epoch=epoch, host=host, samples=samples, failures=failures)
