"""x/learning for programs (a trainer's chain sink, a verifier): send its messages, read its state as plain data.

Hashes go in as 32 raw bytes and come out as lower-case hex; every field of a record comes out by its proto
name. A refused transaction raises ``TxFailed`` with the chain's codespace and code (see ``errors.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from protogen.gonka.learning.v1 import query_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.client.tx import Delivered, TxOptions, deliver_shared, fetch_chain_id
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1
from sdk.services import gonka

QUERY = gonka("learning").query
DEFAULT_OPTIONS = TxOptions(gas="auto", gas_adjustment="1.3")


def plain(message: Message) -> dict[str, Any]:
    """Every field by its proto name: bytes as hex, integers as ints, nested messages as dicts."""
    return {f.name: _plain_value(f, getattr(message, f.name)) for f in message.DESCRIPTOR.fields}


def _plain_value(field: FieldDescriptor, value: Any) -> Any:
    if field.label == FieldDescriptor.LABEL_REPEATED:
        return [_plain_scalar(field, item) for item in value]
    return _plain_scalar(field, value)


def _plain_scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return plain(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return value.hex()
    return value


class LearningClient:
    """One node, over CometBFT RPC (and gRPC for queries when ``grpc_addr`` is given)."""

    def __init__(
        self,
        node: str,
        grpc_addr: str | None = None,
        chain_id: str = "",
        options: TxOptions = DEFAULT_OPTIONS,
        timeout_s: float = 60.0,
    ) -> None:
        self.querier = Querier(node, grpc_addr)
        self._chain_id = chain_id
        self.options = options
        self.timeout_s = timeout_s

    @property
    def chain_id(self) -> str:
        if not self._chain_id:
            self._chain_id = fetch_chain_id(self.querier)
        return self._chain_id

    def _deliver(self, key: secp256k1.PrivateKey, msg: Message) -> Delivered:
        return deliver_shared(self.querier, key, [msg], self.chain_id, self.options, self.timeout_s)

    # --- transactions: each waits for its block -------------------------------------------------

    def create_run(
        self,
        key: secp256k1.PrivateKey,
        *,
        config_hash: bytes,
        workers: Sequence[str],
        inner_steps: int,
        rounds: int,
        preset: str,
        initial_weights_hash: bytes,
        budget: int,
    ) -> int:
        """Register a run signed by ``key``, escrowing ``budget`` (in the chain's learning denom); returns its id."""
        delivered = self._deliver(
            key,
            tx_pb2.MsgCreateTrainingRun(
                creator=address_of(key),
                config_hash=config_hash,
                workers=list(workers),
                inner_steps=inner_steps,
                rounds=rounds,
                preset=preset,
                initial_weights_hash=initial_weights_hash,
                budget=str(budget),
            ),
        )
        return int(delivered.attribute("create_run", "run_id"))

    def commit_checkpoint(
        self,
        key: secp256k1.PrivateKey,
        run_id: int,
        round_: int,
        *,
        start_weights_hash: bytes,
        weights_hash: bytes,
        optimizer_hash: bytes,
        data_order_hash: bytes,
        config_hash: bytes,
        global_weights_hash: bytes,
        outer_momentum_hash: bytes,
    ) -> Delivered:
        """Commit the worker ``key``'s state hashes for one round."""
        return self._deliver(
            key,
            tx_pb2.MsgCommitCheckpoint(
                worker=address_of(key),
                run_id=run_id,
                round=round_,
                start_weights_hash=start_weights_hash,
                weights_hash=weights_hash,
                optimizer_hash=optimizer_hash,
                data_order_hash=data_order_hash,
                config_hash=config_hash,
                global_weights_hash=global_weights_hash,
                outer_momentum_hash=outer_momentum_hash,
            ),
        )

    def submit_verdict(
        self,
        key: secp256k1.PrivateKey,
        run_id: int,
        round_: int,
        worker: str,
        valid: bool,
        *,
        replay_weights_hash: bytes,
        replay_optimizer_hash: bytes,
        reason: str = "",
    ) -> Delivered:
        """Record ``key``'s verdict on a worker's checkpoint after replaying its round."""
        return self._deliver(
            key,
            tx_pb2.MsgSubmitVerdict(
                verifier=address_of(key),
                run_id=run_id,
                round=round_,
                worker=worker,
                valid=valid,
                replay_weights_hash=replay_weights_hash,
                replay_optimizer_hash=replay_optimizer_hash,
                reason=reason,
            ),
        )

    def claim(self, key: secp256k1.PrivateKey, run_id: int, round_: int) -> Delivered:
        """Claim the worker ``key``'s share for its VALID checkpoint of a round (paid vested)."""
        return self._deliver(key, tx_pb2.MsgClaimTrainingReward(worker=address_of(key), run_id=run_id, round=round_))

    # --- queries: plain data; a missing run or checkpoint raises RPCError ---------------------------

    def params(self) -> dict[str, Any]:
        reply = self.querier.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse)
        return plain(reply.params)

    def run(self, run_id: int) -> dict[str, Any]:
        reply = self.querier.query(QUERY + "Run", query_pb2.QueryRunRequest(run_id=run_id), query_pb2.QueryRunResponse)
        return plain(reply.run)

    def runs(self) -> list[dict[str, Any]]:
        """Every run in id order."""
        return self._all_pages("Runs", query_pb2.QueryRunsRequest(), query_pb2.QueryRunsResponse, "runs")

    def checkpoint(self, run_id: int, round_: int, worker: str) -> dict[str, Any]:
        reply = self.querier.query(
            QUERY + "Checkpoint",
            query_pb2.QueryCheckpointRequest(run_id=run_id, round=round_, worker=worker),
            query_pb2.QueryCheckpointResponse,
        )
        return plain(reply.checkpoint)

    def checkpoints(self, run_id: int, round_: int) -> list[dict[str, Any]]:
        """Every worker's checkpoint of the round, in worker-address order."""
        reply = self.querier.query(
            QUERY + "Checkpoints",
            query_pb2.QueryCheckpointsRequest(run_id=run_id, round=round_),
            query_pb2.QueryCheckpointsResponse,
        )
        return [plain(checkpoint) for checkpoint in reply.checkpoints]

    def verdicts(self, run_id: int, round_: int, worker: str) -> list[dict[str, Any]]:
        """Every verdict on the checkpoint, in verifier-address order."""
        request = query_pb2.QueryVerdictsRequest(run_id=run_id, round=round_, worker=worker)
        return self._all_pages("Verdicts", request, query_pb2.QueryVerdictsResponse, "verdicts")

    def assigned(self, verifier: str) -> list[dict[str, Any]]:
        """The PENDING checkpoints that drew ``verifier`` and hold no verdict of it."""
        reply = self.querier.query(
            QUERY + "Assigned", query_pb2.QueryAssignedRequest(verifier=verifier), query_pb2.QueryAssignedResponse
        )
        return [plain(checkpoint) for checkpoint in reply.checkpoints]

    def owed(self, worker: str) -> list[dict[str, Any]]:
        """The worker's VALID checkpoints it has not claimed."""
        reply = self.querier.query(
            QUERY + "Owed", query_pb2.QueryOwedRequest(worker=worker), query_pb2.QueryOwedResponse
        )
        return [plain(checkpoint) for checkpoint in reply.checkpoints]

    def _all_pages(self, method: str, request: Any, response_type: type[Message], field: str) -> list[dict[str, Any]]:
        """A paginated query followed by next_key to its end."""
        items: list[dict[str, Any]] = []
        while True:
            reply: Any = self.querier.query(QUERY + method, request, response_type)
            items += [plain(item) for item in getattr(reply, field)]
            if not reply.pagination.next_key:
                return items
            request.pagination.key = reply.pagination.next_key
