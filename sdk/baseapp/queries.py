"""Queries: Info, ABCI Query (store keys with proofs, the app root, simulations, module routes) and the
committed-state jobs the gRPC server's queries run, plus the framework's own query routes.

Threading: every ABCI call runs on the node's event loop, one at a time, except the job a module query
or a simulation becomes (``begin_query``): that reads only a snapshot of the committed state, taken on
the loop, and may run on a worker thread (sdk/workers.py) while blocks execute and commit.

Proofs and historic reads (``/store/key``, ``/app/root``) walk the Merkle tree through the store's node
cache, which only the loop thread may touch: they are answered at once. Module queries and simulations
become jobs over a snapshot: of the latest state, or for a module query at a past kept height (ABCI's
``height``, gRPC's ``x-cosmos-block-height``) of that version, read without the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

from cosmpy.protos.cosmos.base.node.v1beta1 import query_pb2 as node_query
from cosmpy.protos.cosmos.consensus.v1 import query_pb2 as consensus_query
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import proof_pb2
from google.protobuf.message import Message

from sdk.baseapp.simulate_service import SIMULATE_PATH, simulate_response, simulated_tx_bytes
from sdk.baseapp.state import CommittedState, stored_consensus_params
from sdk.baseapp.transactions import Transactions
from sdk.codec import decode
from sdk.coins import format_dec_coins
from sdk.context import BlockHeader, Context
from sdk.errors import ABCIError, ErrInvalidRequest, ErrNotFound, ErrUnknownRequest
from sdk.module import QueryRoute
from sdk.rpc_status import status_text
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore, UnprovableError, VersionUnavailableError
from sdk.store.proof import PROOF_OP_TYPE

T = TypeVar("T")
QueryJob = Callable[[], abci.ResponseQuery]
CommittedWork = Callable[[CommittedState, BlockHeader], T]
"""What a job does with the committed state: its snapshot and the header of its block."""
CONSENSUS_PARAMS_QUERY = "/cosmos.consensus.v1.Query/Params"
NODE_CONFIG_QUERY = "/cosmos.base.node.v1beta1.Service/Config"
APP_VERSION = 1


class Queries(Transactions):
    """Info and every read of committed state: at once on the loop, or as a job a worker may run."""

    def info(self, req: abci.RequestInfo) -> abci.ResponseInfo:
        version = self.store.version
        return abci.ResponseInfo(
            data=self.name,
            version="0.1.0",
            app_version=APP_VERSION,
            last_block_height=version,
            last_block_app_hash=self.store.root_hash if version else b"",
        )

    # --- the framework's own query routes ------------------------------------------------------

    def framework_query_routes(self) -> dict[str, QueryRoute]:
        """Services every Cosmos chain answers that belong to no module: wallets read the block gas limit
        from the consensus params, and the node's minimum gas price to set a fee, before they send."""
        return {
            CONSENSUS_PARAMS_QUERY: QueryRoute(
                consensus_query.QueryParamsRequest, self.query_consensus_params, bounded=True
            ),
            NODE_CONFIG_QUERY: QueryRoute(node_query.ConfigRequest, self.query_node_config, bounded=True),
        }

    def query_consensus_params(
        self, ctx: Context, req: consensus_query.QueryParamsRequest
    ) -> consensus_query.QueryParamsResponse:
        params = stored_consensus_params(ctx.store)
        if params is None:
            raise ErrNotFound.wrap("consensus params: InitChain gave none")
        return consensus_query.QueryParamsResponse(params=params)

    def query_node_config(self, ctx: Context, req: node_query.ConfigRequest) -> node_query.ConfigResponse:
        """This node's own settings (app.toml), not state: other nodes may ask a different minimum gas price."""
        return node_query.ConfigResponse(minimum_gas_price=format_dec_coins(self.min_gas_prices))

    # --- ABCI Query ------------------------------------------------------------------------------

    def query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        """Answer at once on the calling thread (tests, tools); the servers use ``begin_query``."""
        answer = self.begin_query(req)
        return answer if isinstance(answer, abci.ResponseQuery) else answer()

    def begin_query(self, req: abci.RequestQuery) -> abci.ResponseQuery | QueryJob:
        """On the loop thread: the answer, or for a module query or a simulation a ``committed_job``."""
        try:
            return self._query(req)
        except ABCIError as err:
            return failed_query(err, req.height)

    def _query(self, req: abci.RequestQuery) -> abci.ResponseQuery | QueryJob:
        height = self.query_height(req.height)
        path = "/" + req.path.lstrip("/")
        if path == "/store/key":
            return self._query_key(req.data, height, req.prove)
        if path == "/app/root":
            return abci.ResponseQuery(value=self._root_at(height), height=height)
        if path == "/app/simulate":
            return self._query_job(req.height, partial(self._query_simulate, req.data))
        if path == SIMULATE_PATH:
            try:
                raw = simulated_tx_bytes(decode(tx_service.SimulateRequest, req.data, "query request"))
            except ABCIError as err:
                return failed_route_query(err, req.height)
            return self._query_job(req.height, partial(self._query_simulate_route, raw, req.height))
        route = self.query_routes.get(path)
        if route is None:
            raise ErrUnknownRequest.wrap(f"unknown query path {req.path!r}")
        try:
            request = decode(route.request_type, req.data, "query request")
            if route.bounded and height == self.store.version:
                value = self.query_bounded(route, request).SerializeToString()
                return abci.ResponseQuery(value=value, height=height)
        except ABCIError as err:
            return failed_route_query(err, req.height)
        return self._query_job(req.height, partial(self._query_route, route, request, req.height), height)

    def _query_job(self, height: int, work: CommittedWork[abci.ResponseQuery], at: int = 0) -> QueryJob:
        """A ``committed_job`` at height ``at`` (0: the latest) whose errors become answers (at ``height``, the
        request's), as ``begin_query``'s own do."""

        def answer(state: CommittedState, header: BlockHeader) -> abci.ResponseQuery:
            try:
                return work(state, header)
            except ABCIError as err:
                return failed_query(err, height)

        return self.committed_job(answer, at)

    def _query_route(
        self, route: QueryRoute, request: Message, asked: int, state: CommittedState, header: BlockHeader
    ) -> abci.ResponseQuery:
        try:
            value = self.query_module(route, request, state, header).SerializeToString()
        except ABCIError as err:
            return failed_route_query(err, asked)
        return abci.ResponseQuery(value=value, height=header.height)

    def _query_simulate_route(
        self, raw_tx: bytes, asked: int, state: CommittedState, header: BlockHeader
    ) -> abci.ResponseQuery:
        try:
            response = simulate_response(self.simulate(raw_tx, state, header))
        except ABCIError as err:
            return failed_route_query(err, asked)
        return abci.ResponseQuery(value=response.SerializeToString(), height=header.height)

    def _query_simulate(self, raw_tx: bytes, state: CommittedState, header: BlockHeader) -> abci.ResponseQuery:
        result = self.simulate(raw_tx, state, header)
        if result.code:
            return abci.ResponseQuery(
                code=result.code, codespace=result.codespace, log=result.log, height=header.height
            )
        return abci.ResponseQuery(value=simulate_response(result).SerializeToString(), height=header.height)

    def _root_at(self, height: int) -> bytes:
        try:
            return self.store.root_at(height)
        except (KeyError, ValueError) as exc:
            raise ErrNotFound.wrap(str(exc)) from None

    def _query_key(self, key: bytes, height: int, prove: bool) -> abci.ResponseQuery:
        if not key:
            raise ErrInvalidRequest.wrap("empty key")
        self._root_at(height)
        if not prove:
            value = self.store.get_at(key, height)
            return abci.ResponseQuery(key=key, value=value or b"", height=height)
        try:
            value, proof = self.store.prove(key, height)
        except UnprovableError as exc:
            raise ErrInvalidRequest.wrap(str(exc)) from None
        op = proof_pb2.ProofOp(type=PROOF_OP_TYPE, key=key, data=proof)
        return abci.ResponseQuery(key=key, value=value or b"", height=height, proof_ops=proof_pb2.ProofOps(ops=[op]))

    # --- committed-state jobs (ABCI Query and the gRPC server) -------------------------------------

    def query_height(self, requested: int) -> int:
        """The committed height a query at ``requested`` reads (0: the latest), as the Cosmos SDK answers
        one: ``sdk/18`` for a negative height or one not committed yet."""
        latest = self.store.version
        if requested < 0:
            raise ErrInvalidRequest.wrap(f"height {requested} is negative")
        if requested > latest:
            raise ErrInvalidRequest.wrap(f"height {requested} is not committed yet; latest is {latest}")
        return requested or latest

    def committed_job(self, work: CommittedWork[T], height: int = 0) -> Callable[[], T]:
        """``work`` bound to the committed state at ``height`` (0: the latest) as of now, as a job that a
        worker thread may run; ``query_height``'s errors for a height that names no block, ``sdk/38`` for
        one no longer kept.

        Call it on the loop thread: the snapshot, its version and the chain id are taken there, between
        two ABCI calls, so the job sees one block's state whole even if a Commit lands while it runs.
        ``work`` must read nothing else of the app's mutable state; the job releases the snapshot.
        """
        try:
            snapshot = self.store.snapshot_at(self.query_height(height))
        except VersionUnavailableError as exc:
            raise ErrNotFound.wrap(str(exc)) from None
        header = BlockHeader(self.chain_id, snapshot.version, 0)

        def job() -> T:
            with snapshot:
                return work(snapshot, header)

        return job

    def query_module(
        self, route: QueryRoute, request: Message, state: CommittedState | CommitStore, header: BlockHeader
    ) -> Message:
        """A module query against a snapshot from ``committed_job`` (so possibly on a worker thread), or
        against the store itself on the loop thread (``query_bounded``)."""
        return route.handler(Context(CacheKV(state), header), request)

    def query_bounded(self, route: QueryRoute, request: Message) -> Message:
        """A bounded query answered now, on the loop thread, from the committed state."""
        return self.query_module(route, request, self.store, BlockHeader(self.chain_id, self.store.version, 0))


def failed_query(err: ABCIError, height: int) -> abci.ResponseQuery:
    return abci.ResponseQuery(code=err.code, codespace=err.codespace, log=err.log, height=height)


def failed_route_query(err: ABCIError, height: int) -> abci.ResponseQuery:
    """A gRPC route's failure as the Cosmos SDK answers it over ABCI: the log is the gRPC status error's text
    (``rpc error: code = NotFound desc = …``), which clients such as CosmJS match on."""
    return abci.ResponseQuery(code=err.code, codespace=err.codespace, log=status_text(err), height=height)
