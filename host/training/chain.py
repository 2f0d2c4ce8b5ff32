"""``TrainingChain``: what the training duty reads from the chain (x/learning's ``Assigned``, ``Owed`` and
checkpoints, the workers' node URLs) and sends to it through the process's one ``TxSigner``."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

from protogen.gonka.learning.v1 import learning_pb2, query_pb2
from sdk.client.querier import Querier
from sdk.client.rpc import RPCNotFound
from sdk.client.signer import Submit
from sdk.services import gonka
from x.inference.client import node_urls

LEARNING = gonka("learning").query


class TrainingChain:
    def __init__(self, querier: Querier, submit: Submit, address: str) -> None:
        self.querier, self.submit, self.address = querier, submit, address

    def assigned(self) -> list[learning_pb2.Checkpoint]:
        """The PENDING checkpoints this host was drawn to replay and has not judged."""
        request = query_pb2.QueryAssignedRequest(verifier=self.address)
        return list(self.querier.query(LEARNING + "Assigned", request, query_pb2.QueryAssignedResponse).checkpoints)

    def owed(self) -> list[learning_pb2.Checkpoint]:
        """This host's VALID checkpoints it has not claimed."""
        request = query_pb2.QueryOwedRequest(worker=self.address)
        return list(self.querier.query(LEARNING + "Owed", request, query_pb2.QueryOwedResponse).checkpoints)

    def checkpoint(self, run_id: int, round_number: int, worker: str) -> learning_pb2.Checkpoint | None:
        request = query_pb2.QueryCheckpointRequest(run_id=run_id, round=round_number, worker=worker)
        try:
            return self.querier.query(LEARNING + "Checkpoint", request, query_pb2.QueryCheckpointResponse).checkpoint
        except RPCNotFound:
            return None

    def max_reason_len(self) -> int:
        reply = self.querier.query(LEARNING + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse)
        return reply.params.max_reason_len

    def urls(self, operator: str) -> list[str]:
        return node_urls(self.querier, operator)

    def send(self, messages: Sequence[Message], gas: int) -> str:
        """The transaction's hash once CheckTx took it."""
        return self.submit(messages, gas).hash
