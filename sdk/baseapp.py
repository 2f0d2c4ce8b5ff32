"""BaseApp: the transaction pipeline and the ABCI state machine every module plugs into.

decode -> stateless checks -> ante (signatures, sequences, fee) -> route each message -> events.
Block state lives in a branch of the committed store; each transaction runs in branches of that, so a
failing transaction reverts only its own writes. Only ``Commit`` persists, in one atomic batch.

Threading: every ABCI call runs on the node's event loop, one at a time, except the job a module query
or a simulation becomes (``begin_query``): that reads only a snapshot of the committed state, taken on
the loop, and may run on a worker thread (sdk/server/workers.py) while blocks execute and commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from functools import partial
from fractions import Fraction
from typing import Any, TypeVar

from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import proof_pb2
from google.protobuf.message import Message

from sdk.abci.application import Application
from sdk.context import MEMPOOL_MODES, BlockHeader, Context, ExecMode
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT, GasKV, GasMeter
from sdk.errors import ABCIError, ErrInvalidRequest, ErrNotFound, ErrOutOfGas, ErrUnknownRequest
from sdk.module import Module, MsgRoute, QueryRoute
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore, Snapshot
from sdk.store.proof import PROOF_OP_TYPE
from sdk.codec import decode, decode_strict
from sdk.tx import Tx, decode_tx, validate_basic

log = logging.getLogger("gonkad.app")

AnteHandler = Callable[[Context, Tx, list[bytes]], None]
T = TypeVar("T")
QueryJob = Callable[[], abci.ResponseQuery]
CommittedWork = Callable[[Snapshot, BlockHeader], T]
"""What a job does with the committed state: its snapshot and the header of its block."""
CHAIN_ID_KEY = b"baseapp/chain_id"
APP_VERSION = 1
INTERNAL_ERROR = 1


def time_ns(timestamp: Any) -> int:
    return int(timestamp.seconds) * 1_000_000_000 + int(timestamp.nanos)


def result_of(err: ABCIError, gas_wanted: int, gas_used: int, events: Sequence[abci.Event] = ()) -> abci.ExecTxResult:
    return abci.ExecTxResult(
        code=err.code, codespace=err.codespace, log=err.log, gas_wanted=gas_wanted, gas_used=gas_used,
        events=list(events),
    )


def chain_id_of(state: CacheKV | CommitStore) -> str:
    """The chain id is state written at InitChain, so a restarted node knows it without the genesis file."""
    raw = state.get(CHAIN_ID_KEY)
    return raw.decode() if raw else ""


class BaseApp(Application):
    """Routes ABCI calls to the modules; the app constructor (``app.py``) decides which modules."""

    def __init__(
        self,
        store: CommitStore,
        modules: Sequence[Module],
        ante: AnteHandler,
        min_gas_prices: tuple[tuple[str, Fraction], ...] = (),
        index_events: frozenset[str] = frozenset(),
        name: str = "gonka",
        simulation_gas_limit: int = DEFAULT_SIMULATION_GAS_LIMIT,
    ) -> None:
        self.store = store
        self.simulation_gas_limit = simulation_gas_limit
        self.min_gas_prices = min_gas_prices
        self.index_events = index_events
        self.modules = list(modules)
        self.ante = ante
        self.name = name
        self.msg_routes: dict[str, MsgRoute] = {}
        self.query_routes: dict[str, QueryRoute] = {}
        prefixes: set[bytes] = set()
        for module in self.modules:
            if any(p.startswith(module.store_prefix) or module.store_prefix.startswith(p) for p in prefixes):
                raise ValueError(f"module {module.name} store prefix {module.store_prefix!r} overlaps another")
            prefixes.add(module.store_prefix)
            _merge_routes(self.msg_routes, module.msg_routes(), module.name)
            _merge_routes(self.query_routes, module.query_routes(), module.name)
        self.pending_genesis: CacheKV | None = None
        self.check_state = CacheKV(store)

    # --- helpers ---------------------------------------------------------------------------

    @property
    def chain_id(self) -> str:
        return chain_id_of(self.pending_genesis or self.store)

    def _check_header(self) -> BlockHeader:
        return BlockHeader(chain_id=self.chain_id, height=self.store.version + 1, time_ns=0)

    def decode_messages(self, tx: Tx) -> list[tuple[MsgRoute, Message]]:
        decoded = []
        for packed in tx.messages:
            route = self.msg_routes.get(packed.type_url)
            if route is None:
                raise ErrUnknownRequest.wrap(f"unrecognized message type {packed.type_url!r}")
            decoded.append((route, decode_strict(route.msg_type, packed.value, packed.type_url, allow_non_critical=True)))
        return decoded

    def signers_of(self, messages: list[tuple[MsgRoute, Message]]) -> list[bytes]:
        """Stateless checks of every message, then its signers in first-seen order."""
        signers: list[bytes] = []
        for route, msg in messages:
            route.validate_basic(msg)
            for signer in route.signers(msg):
                if signer not in signers:
                    signers.append(signer)
        return signers

    def run_tx(self, ctx: Context, raw: bytes) -> abci.ExecTxResult:
        """One transaction: ante writes survive a failing message (fee and sequence), message writes do not.

        ``ctx.store`` is the branch the transaction applies to (block state, check state or a throwaway
        branch for simulation); gas is metered on every store access from the ante handler on.
        """
        meter = GasMeter(0)
        gas_wanted = 0
        try:
            tx = decode_tx(raw)
            validate_basic(tx)
            messages = self.decode_messages(tx)
            signers = self.signers_of(messages)
            gas_wanted = int(tx.auth_info.fee.gas_limit)
            meter = GasMeter(self.simulation_gas_limit if ctx.mode is ExecMode.SIMULATE else gas_wanted)
            ante_branch = ctx.store.branch()  # type: ignore[attr-defined]
            ante_ctx = Context(GasKV(ante_branch, meter), ctx.header, ctx.mode, meter, ctx.min_gas_prices)
            self.ante(ante_ctx, tx, signers)
        except ABCIError as err:
            return result_of(err, gas_wanted, meter.consumed)
        if ctx.mode in MEMPOOL_MODES:
            result = abci.ExecTxResult(code=0, gas_wanted=gas_wanted, gas_used=meter.consumed)
            ante_branch.write()  # last: a tx the mempool refuses leaves the check state as it was
            return result
        ante_branch.write()
        msg_branch = ctx.store.branch()  # type: ignore[attr-defined]
        msg_ctx = ante_ctx.with_store(GasKV(msg_branch, meter))
        responses = abci_types.TxMsgData()
        try:
            for route, msg in messages:
                msg_ctx.emit("message", action="/" + msg.DESCRIPTOR.full_name)
                response = route.handler(msg_ctx, msg)
                if response is not None:
                    responses.msg_responses.add().Pack(response, type_url_prefix="/")
        except ABCIError as err:
            return result_of(err, gas_wanted, meter.consumed, ante_ctx.events)
        msg_branch.write()
        ctx.validator_updates.extend(msg_ctx.validator_updates)
        return abci.ExecTxResult(
            code=0, data=responses.SerializeToString(), gas_wanted=gas_wanted, gas_used=meter.consumed,
            events=[*ante_ctx.events, *msg_ctx.events]
        )

    def simulate(self, raw: bytes, state: Snapshot, header: BlockHeader) -> abci.ExecTxResult:
        """Run a transaction fully against the committed state and throw the writes away (gas estimate).

        ``state`` and ``header`` come from ``committed_job``, so this may run on a worker thread. Asking
        costs nothing, so the work is capped at the node's ``simulation_gas_limit`` (app.toml).
        """
        ctx = Context(CacheKV(state), BlockHeader(header.chain_id, header.height + 1, 0), ExecMode.SIMULATE)
        result = self.run_tx_safely(ctx, raw)
        if (result.codespace, result.code) == (ErrOutOfGas.codespace, ErrOutOfGas.code):
            result.log = ErrOutOfGas.wrap(
                f"simulation needs more than this node's limit of {self.simulation_gas_limit} gas"
                " (app.toml simulation_gas_limit)"
            ).log
        return result

    def run_tx_safely(self, ctx: Context, raw: bytes) -> abci.ExecTxResult:
        """A bug in a handler fails that transaction with a deterministic log; the node goes on."""
        try:
            return self.run_tx(ctx, raw)
        except Exception as exc:  # noqa: BLE001 - the state machine must not crash on one tx
            log.exception("internal error while executing a transaction")
            return abci.ExecTxResult(code=INTERNAL_ERROR, codespace="sdk", log=f"internal error: {type(exc).__name__}")

    # --- ABCI: info and genesis ---------------------------------------------------------------

    def info(self, req: abci.RequestInfo) -> abci.ResponseInfo:
        version = self.store.version
        return abci.ResponseInfo(
            data=self.name,
            version="0.1.0",
            app_version=APP_VERSION,
            last_block_height=version,
            last_block_app_hash=self.store.root_hash if version else b"",
        )

    def init_chain(self, req: abci.RequestInitChain) -> abci.ResponseInitChain:
        app_state: dict[str, Any] = json.loads(req.app_state_bytes) if req.app_state_bytes else {}
        unknown = sorted(set(app_state) - {m.name for m in self.modules})
        if unknown:
            raise ValueError(f"genesis app_state has unknown modules: {', '.join(unknown)}")
        state = CacheKV(self.store)
        state.set(CHAIN_ID_KEY, req.chain_id.encode())
        # Height 0: genesis transactions are signed with account number 0, as in the Cosmos SDK.
        ctx = Context(state, BlockHeader(req.chain_id, 0, time_ns(req.time)))
        for module in self.modules:
            module.init_genesis(ctx, app_state.get(module.name, module.default_genesis()))
        self.pending_genesis = state
        # The validators the gentxs created; none keeps the set in CometBFT's genesis.json.
        return abci.ResponseInitChain(app_hash=self.store.apply(state.changes()), validators=ctx.validator_updates)

    # --- ABCI: mempool --------------------------------------------------------------------------

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        mode = ExecMode.RECHECK if req.type == abci.RECHECK else ExecMode.CHECK
        ctx = Context(self.check_state, self._check_header(), mode, min_gas_prices=self.min_gas_prices)
        result = self.run_tx_safely(ctx, req.tx)
        return abci.ResponseCheckTx(
            code=result.code, codespace=result.codespace, log=result.log, gas_wanted=result.gas_wanted,
            gas_used=result.gas_used, events=result.events,
        )

    # --- ABCI: consensus ------------------------------------------------------------------------

    def finalize_block(self, req: abci.RequestFinalizeBlock) -> abci.ResponseFinalizeBlock:
        state = self.pending_genesis or CacheKV(self.store)
        self.pending_genesis = None
        header = BlockHeader(chain_id_of(state), req.height, time_ns(req.time), req.proposer_address)
        ctx = Context(state, header)
        for module in self.modules:
            module.begin_block(ctx)
        results = [self.run_tx_safely(ctx, tx) for tx in req.txs]
        for module in self.modules:
            module.end_block(ctx)
        app_hash = self.store.apply(state.changes())
        if self.index_events:
            mark_events_to_index(self.index_events, [ctx.events, *(r.events for r in results)])
        return abci.ResponseFinalizeBlock(
            events=ctx.events, tx_results=results, app_hash=app_hash, validator_updates=ctx.validator_updates
        )

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        self.store.commit()
        self.check_state = CacheKV(self.store)
        return abci.ResponseCommit()

    # --- ABCI: queries --------------------------------------------------------------------------

    # Proofs and historic reads (``/store/key``, ``/app/root``) walk the Merkle tree through the store's
    # node cache, which only the loop thread may touch: they are answered at once. Module queries and
    # simulations read only the latest state: they become jobs over a snapshot of it.

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

    def committed_job(self, work: CommittedWork[T]) -> Callable[[], T]:
        """``work`` bound to the committed state as of now, as a job that a worker thread may run.

        Call it on the loop thread: the snapshot, its version and the chain id are taken there, between
        two ABCI calls, so the job sees one block's state whole even if a Commit lands while it runs.
        ``work`` must read nothing else of the app's mutable state; the job releases the snapshot.
        """
        snapshot = self.store.snapshot()
        header = BlockHeader(self.chain_id, snapshot.version, 0)

        def job() -> T:
            with snapshot:
                return work(snapshot, header)

        return job

    def query_module(
        self, route: QueryRoute, request: Message, state: Snapshot | CommitStore, header: BlockHeader
    ) -> Message:
        """A module query against a snapshot from ``committed_job`` (so possibly on a worker thread), or
        against the store itself on the loop thread (``query_bounded``)."""
        return route.handler(Context(CacheKV(state), header), request)

    def query_bounded(self, route: QueryRoute, request: Message) -> Message:
        """A bounded query answered now, on the loop thread, from the committed state."""
        return self.query_module(route, request, self.store, BlockHeader(self.chain_id, self.store.version, 0))

    def _query(self, req: abci.RequestQuery) -> abci.ResponseQuery | QueryJob:
        latest = self.store.version
        height = req.height or latest
        if height > latest:
            raise ErrInvalidRequest.wrap(f"height {height} is not committed yet; latest is {latest}")
        path = "/" + req.path.lstrip("/")
        if path == "/store/key":
            return self._query_key(req.data, height, req.prove)
        if path == "/app/root":
            return abci.ResponseQuery(value=self._root_at(height), height=height)
        if path == "/app/simulate":
            return self._query_job(req.height, partial(self._query_simulate, req.data))
        route = self.query_routes.get(path)
        if route is None:
            raise ErrUnknownRequest.wrap(f"unknown query path {req.path!r}")
        if height != latest:
            raise ErrInvalidRequest.wrap("module queries read the latest committed state; omit the height")
        request = decode(route.request_type, req.data, "query request")
        if route.bounded:
            return abci.ResponseQuery(value=self.query_bounded(route, request).SerializeToString(), height=latest)
        return self._query_job(req.height, partial(self._query_route, route, request))

    def _query_job(self, height: int, work: CommittedWork[abci.ResponseQuery]) -> QueryJob:
        """A ``committed_job`` whose errors become answers, as ``begin_query``'s own do."""

        def answer(state: Snapshot, header: BlockHeader) -> abci.ResponseQuery:
            try:
                return work(state, header)
            except ABCIError as err:
                return failed_query(err, height)

        return self.committed_job(answer)

    def _query_route(
        self, route: QueryRoute, request: Message, state: Snapshot, header: BlockHeader
    ) -> abci.ResponseQuery:
        value = self.query_module(route, request, state, header).SerializeToString()
        return abci.ResponseQuery(value=value, height=header.height)

    def _query_simulate(self, raw_tx: bytes, state: Snapshot, header: BlockHeader) -> abci.ResponseQuery:
        result = self.simulate(raw_tx, state, header)
        if result.code:
            return abci.ResponseQuery(
                code=result.code, codespace=result.codespace, log=result.log, height=header.height
            )
        response = tx_service.SimulateResponse(
            gas_info=abci_types.GasInfo(gas_wanted=result.gas_wanted, gas_used=result.gas_used),
            result=abci_types.Result(log=result.log, events=result.events),
        )
        return abci.ResponseQuery(value=response.SerializeToString(), height=header.height)

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
        value, proof = self.store.prove(key, height)
        op = proof_pb2.ProofOp(type=PROOF_OP_TYPE, key=key, data=proof.encode())
        return abci.ResponseQuery(
            key=key, value=value or b"", height=height, proof_ops=proof_pb2.ProofOps(ops=[op])
        )


def failed_query(err: ABCIError, height: int) -> abci.ResponseQuery:
    return abci.ResponseQuery(code=err.code, codespace=err.codespace, log=err.log, height=height)


def mark_events_to_index(index_events: frozenset[str], event_lists: Sequence[Sequence[abci.Event]]) -> None:
    """Index only the configured ``type.key`` pairs: CometBFT's indexer is a large part of a tx's cost.

    Indexing is node-local (it never changes results or the app hash), so nodes may differ here.
    """
    for events in event_lists:
        for event in events:
            for attribute in event.attributes:
                attribute.index = f"{event.type}.{attribute.key}" in index_events


def _merge_routes(into: dict[str, Any], new: dict[str, Any], module: str) -> None:
    for route in new:
        if route in into:
            raise ValueError(f"route {route} registered twice (module {module})")
    into.update(new)
