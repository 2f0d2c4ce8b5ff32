"""``ChainInferenceView``: the Transfer Agent's ``agent.chain.ChainView`` over a node.

What the TA reads on every poll is cached briefly (``ttl_s``, default 2 s): the model registry, the ML nodes
(one ``Nodes`` query for all models), the hosts' weights (x/stake's ``EpochWeights`` of the current epoch, or
its ``ValidatorPowers`` while no weights are recorded for it) and the hosts x/poc holds INVALID, whose nodes are
left out of routing; ``status`` for ``status_ttl_s``. A requester's spendable balance is read once per height the
application commits (``x.inference.client.Funds``; the height polled every ``height_poll_s``), less the escrows of
the starts this TA sent that are not surely in a block yet: a start is let out only when that covers its escrow
(else ``ChainError("insufficient_funds")``, a 402), so the cache refuses early and never lets through more than
the requester can pay (the chain judges every escrow again in its block).

``start_inference`` builds ``MsgStartInference`` (or, for a ``reassign``, ``MsgReassignInference``) and sends it
through the TA's ``TxSigner``: the answer is CheckTx's. Starts go through a ``StartBatcher``: those that arrive
while a transaction is on its way go out together in the next one, as one ``MsgStartInferences`` (a lone start as
itself). CheckTx runs the ante handler and the messages'
stateless checks only; the messages' own rules (the escrow, a known id) run in the block. So before a start, the
view asks whether the id is already committed (``check_known``: the starts in the committed blocks it read,
``agent.started.StartedIds``, which states its freshness rule; the chain's ``Query/Inference`` for a request
those cannot judge), which turns it into ``already_exists``:
the TA then asks the host the chain names (``executor_of``) with the same signed request, which serves it, or its
kept answer, once (the client failed over to this TA). A take-over on chain waits for the executor's window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.message import Message

from agent.batcher import StartBatcher
from agent.config import DEFAULT_GAS_LIMIT
from agent.started import StartedIds
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from protogen.gonka.poc.v1 import poc_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.client.chain import Cached, ChainClient, M
from sdk.client.rpc import RPCError
from sdk.client.signer import Sent
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.services import gonka
from x.inference.client import (
    ChainError,
    Funds,
    Model,
    Node,
    StartRequest,
    inference,
    refusal,
    start_message,
)
from x.poc.client.queries import hosts as poc_hosts

INFERENCE, STAKE, EPOCHS = gonka("inference").query, gonka("stake").query, gonka("epochs").query
PAGE_LIMIT = 1000


class ChainInferenceView(ChainClient):
    """``agent.chain.ChainView`` for the TA whose key is ``key``, over one node (``node``: CometBFT RPC,
    ``grpc_addr``: its gRPC server). ``tas`` are the other Transfer Agents' URLs the TA announces."""

    def __init__(
        self,
        node: str,
        key: secp256k1.PrivateKey,
        grpc_addr: str | None = None,
        tas: Sequence[str] = (),
        *,
        chain_id: str = "",
        ttl_s: float = 2.0,
        status_ttl_s: float = 0.5,
        gas_limit: int = DEFAULT_GAS_LIMIT,
        fees: Coins = Coins(),
        check_known: bool = True,
        timeout_s: float = 5.0,
        max_batch: int = 64,
        denom: str = "ngonka",
        height_poll_s: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(node, key, grpc_addr, chain_id, gas_limit, fees, timeout_s, status_ttl_s, clock, refusal)
        self.batcher = StartBatcher(self._send_starts, max_batch)
        self._tas = list(tas)
        self.check_known = check_known
        self._models = Cached(ttl_s, self._load_models, clock)
        self._nodes = Cached(ttl_s, self._load_nodes, clock)
        self._weights = Cached(ttl_s, self._load_weights, clock)
        self._invalid = Cached(ttl_s, self._load_invalid, clock)
        self.denom = denom
        self._params = Cached(ttl_s, self._load_params, clock)
        self.started = StartedIds(
            self.rpc.call,
            self.rpc.app_height,
            lambda: self._params.get().request_max_future_s,
            height_poll_s,
            clock=clock,
        )
        self.app_height = self.started.follower.app_height
        self.funds = Funds(super().spendable, self.app_height.get)

    # --- reads ------------------------------------------------------------------------------------------------

    def _pages(self, path: str, make: Callable[[bytes], Message], response_type: type[M]) -> list[M]:
        pages: list[M] = []
        key = b""
        while True:
            page = self._query(path, make(key), response_type)
            pages.append(page)
            key = page.pagination.next_key  # type: ignore[attr-defined]
            if not key:
                return pages

    def _load_params(self) -> inference_pb2.Params:
        return self._query(INFERENCE + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params

    def _load_models(self) -> list[Model]:
        pages = self._pages(
            INFERENCE + "Models",
            lambda key: query_pb2.QueryModelsRequest(pagination={"key": key, "limit": PAGE_LIMIT}),
            query_pb2.QueryModelsResponse,
        )
        return [Model(m.id, m.context_length, m.price_per_token) for page in pages for m in page.models]

    def _load_nodes(self) -> list[Any]:
        pages = self._pages(
            INFERENCE + "Nodes",
            lambda key: query_pb2.QueryNodesRequest(pagination={"key": key, "limit": PAGE_LIMIT}),
            query_pb2.QueryNodesResponse,
        )
        return [n for page in pages for n in page.nodes]

    def _load_weights(self) -> dict[str, int]:
        """The hosts' weights of the current epoch; the validator powers while none are recorded for it."""
        epoch = self._query(
            EPOCHS + "CurrentEpoch", epochs_query.QueryCurrentEpochRequest(), epochs_query.QueryCurrentEpochResponse
        ).epoch.number
        try:
            weights = self._query(
                STAKE + "EpochWeights",
                stake_query.QueryEpochWeightsRequest(epoch=epoch),
                stake_query.QueryEpochWeightsResponse,
            ).weights
        except RPCError:  # not found: none recorded for this epoch yet
            weights = self._query(
                STAKE + "ValidatorPowers",
                stake_query.QueryValidatorPowersRequest(),
                stake_query.QueryValidatorPowersResponse,
            ).powers
        return {w.operator: w.weight for w in weights}

    def _load_invalid(self) -> frozenset[str]:
        """The hosts found cheating at inference (x/poc ``INVALID``): the TA routes nothing to them."""
        return frozenset(h.host for h in poc_hosts(self.querier, poc_pb2.HOST_STATUS_INVALID))

    def models(self) -> list[Model]:
        return list(self._models.get())

    def nodes(self, model_id: str) -> list[Node]:
        weights, invalid = self._weights.get(), self._invalid.get()
        return [
            Node(
                n.operator,
                n.node_id,
                n.url,
                tuple(n.models),
                n.memory_bytes,
                n.max_concurrency,
                weights.get(n.operator, 0),
            )
            for n in self._nodes.get()
            if model_id in n.models and n.operator not in invalid
        ]

    def spendable(self, address: str, denom: str) -> int:
        """What ``address`` can spend of ``denom``, less the escrows of its starts not surely in a block yet."""
        return self.funds.spendable(address, denom)

    def tas(self) -> list[str]:
        return list(self._tas)

    def executor_of(self, inference_id: bytes) -> str | None:
        found = inference(self.querier, inference_id)
        running = found is not None and found.status in (inference_pb2.STATUS_STARTED, inference_pb2.STATUS_FINISHED)
        return found.executor if running else None

    def known(self, inference_id: bytes, timestamp_ns: int) -> bool:
        """Whether the committed state has the inference (of a request stamped ``timestamp_ns``): the blocks read
        when they can tell, else the chain (False when the node cannot tell)."""
        found = self.started.known(inference_id, timestamp_ns)
        return found if found is not None else inference(self.querier, inference_id) is not None

    # --- the TA's transactions -----------------------------------------------------------------------------------

    def start_inference(self, request: StartRequest) -> bytes:
        """Sign and send the start (or reassignment); the transaction CheckTx took, which the TA hands the executor
        (``host.admission``); ``ChainError`` when the chain refuses it."""
        if not request.reassign and self.check_known and self.known(request.inference_id, request.timestamp_ns):
            raise ChainError("already_exists", f"inference {request.inference_id.hex()} is already on chain")
        message = start_message(self.address, request)
        if request.reassign:
            return self.submit(message).raw
        escrow = request.max_tokens * request.fee_per_token
        short = self.funds.reserve(request.requester, self.denom, escrow)
        if short is not None:
            spendable, held = short
            raise ChainError(
                "insufficient_funds",
                f"{request.requester} can spend {spendable}{self.denom}; its starts not in a block yet hold "
                f"{held}, this one needs {escrow}",
            )
        try:
            return self.batcher.submit(message)  # type: ignore[arg-type]
        except ChainError:  # CheckTx refused it: it will be in no block (a node that did not answer may have it)
            self.funds.release(request.requester, self.denom, escrow)
            raise

    def _send_starts(self, starts: list[tx_pb2.MsgStartInference]) -> bytes:
        """One transaction for ``starts``: the start itself when alone, else ``MsgStartInferences`` (gas: the
        limit per start)."""
        if len(starts) == 1:
            return self.submit(starts[0]).raw
        batch = tx_pb2.MsgStartInferences(ta=self.address, starts=starts)
        return self.signer.submit([batch], self.signer.gas_limit * len(starts)).raw

    def submit(self, message: Message) -> Sent:
        """Sign ``message`` with the TA's key at the next sequence and broadcast it (sync)."""
        return self.signer.submit([message])

    @property
    def _account(self) -> tuple[int, int] | None:
        """The signer's (account number, next sequence); None: fetched from the chain at the next send."""
        return self.signer.account

    @_account.setter
    def _account(self, value: tuple[int, int] | None) -> None:
        self.signer.account = value
