"""BaseApp: the transaction pipeline and the ABCI state machine every module plugs into.

decode -> stateless checks -> ante (signatures, sequences, fee) -> route each message -> events.
Block state lives in a branch of the committed store; each transaction runs in branches of that, so a
failing transaction reverts only its own writes. Only ``Commit`` persists, in one atomic batch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import proof_pb2
from google.protobuf.message import DecodeError, Message

from gonkad.abci.application import Application
from gonkad.context import BlockHeader, Context
from gonkad.errors import ABCIError, ErrInvalidRequest, ErrNotFound, ErrTxDecode, ErrUnknownRequest
from gonkad.module import Module, MsgRoute, QueryRoute
from gonkad.store.cachekv import CacheKV
from gonkad.store.commitstore import CommitStore
from gonkad.store.proof import PROOF_OP_TYPE
from gonkad.tx import Tx, decode_tx

log = logging.getLogger("gonkad.app")

AnteHandler = Callable[[Context, Tx, list[bytes]], None]
CHAIN_ID_KEY = b"baseapp/chain_id"
APP_VERSION = 1
INTERNAL_ERROR = 1


def time_ns(timestamp: Any) -> int:
    return int(timestamp.seconds) * 1_000_000_000 + int(timestamp.nanos)


def result_of(err: ABCIError, events: Sequence[abci.Event] = ()) -> abci.ExecTxResult:
    return abci.ExecTxResult(code=err.code, codespace=err.codespace, log=err.log, events=list(events))


class BaseApp(Application):
    """Routes ABCI calls to the modules; the app constructor (``app.py``) decides which modules."""

    def __init__(self, store: CommitStore, modules: Sequence[Module], ante: AnteHandler, name: str = "gonka") -> None:
        self.store = store
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
        raw = (self.pending_genesis or self.store).get(CHAIN_ID_KEY)
        return raw.decode() if raw else ""

    def _check_header(self) -> BlockHeader:
        return BlockHeader(chain_id=self.chain_id, height=self.store.version + 1, time_ns=0)

    def decode_messages(self, tx: Tx) -> list[tuple[MsgRoute, Message]]:
        decoded = []
        for packed in tx.messages:
            route = self.msg_routes.get(packed.type_url)
            if route is None:
                raise ErrUnknownRequest.wrap(f"unrecognized message type {packed.type_url!r}")
            msg = route.msg_type()
            try:
                msg.ParseFromString(packed.value)
            except (DecodeError, RecursionError, ValueError) as exc:
                raise ErrTxDecode.wrap(f"malformed {packed.type_url}: {exc}") from None
            decoded.append((route, msg))
        return decoded

    def run_tx(self, ctx: Context, raw: bytes) -> abci.ExecTxResult:
        """One transaction: ante writes survive a failing message (fee and sequence), message writes do not."""
        try:
            tx = decode_tx(raw)
            messages = self.decode_messages(tx)
            signers: list[bytes] = []
            for route, msg in messages:
                route.validate_basic(msg)
                for signer in route.signers(msg):
                    if signer not in signers:
                        signers.append(signer)
            ante_branch = ctx.store.branch()  # type: ignore[attr-defined]
            ante_ctx = ctx.with_store(ante_branch)
            self.ante(ante_ctx, tx, signers)
        except ABCIError as err:
            return result_of(err)
        ante_branch.write()
        gas_wanted = int(tx.auth_info.fee.gas_limit)
        if ctx.check_tx:
            return abci.ExecTxResult(code=0, gas_wanted=gas_wanted, events=ante_ctx.events)
        msg_branch = ctx.store.branch()  # type: ignore[attr-defined]
        msg_ctx = ctx.with_store(msg_branch)
        try:
            for route, msg in messages:
                msg_ctx.emit("message", action="/" + msg.DESCRIPTOR.full_name)
                route.handler(msg_ctx, msg)
        except ABCIError as err:
            return result_of(err, ante_ctx.events)
        msg_branch.write()
        return abci.ExecTxResult(code=0, gas_wanted=gas_wanted, events=[*ante_ctx.events, *msg_ctx.events])

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
        ctx = Context(state, BlockHeader(req.chain_id, req.initial_height, time_ns(req.time)))
        for module in self.modules:
            module.init_genesis(ctx, app_state.get(module.name, module.default_genesis()))
        self.pending_genesis = state
        return abci.ResponseInitChain(app_hash=self.store.apply(state.changes()))

    # --- ABCI: mempool --------------------------------------------------------------------------

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        ctx = Context(self.check_state, self._check_header(), check_tx=True)
        result = self.run_tx_safely(ctx, req.tx)
        return abci.ResponseCheckTx(
            code=result.code, codespace=result.codespace, log=result.log, gas_wanted=result.gas_wanted,
            events=result.events,
        )

    # --- ABCI: consensus ------------------------------------------------------------------------

    def finalize_block(self, req: abci.RequestFinalizeBlock) -> abci.ResponseFinalizeBlock:
        state = self.pending_genesis or CacheKV(self.store)
        self.pending_genesis = None
        header = BlockHeader(self.chain_id_of(state), req.height, time_ns(req.time), req.proposer_address)
        ctx = Context(state, header)
        for module in self.modules:
            module.begin_block(ctx)
        results = [self.run_tx_safely(ctx, tx) for tx in req.txs]
        for module in self.modules:
            module.end_block(ctx)
        app_hash = self.store.apply(state.changes())
        return abci.ResponseFinalizeBlock(events=ctx.events, tx_results=results, app_hash=app_hash)

    @staticmethod
    def chain_id_of(state: CacheKV) -> str:
        raw = state.get(CHAIN_ID_KEY)
        return raw.decode() if raw else ""

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        self.store.commit()
        self.check_state = CacheKV(self.store)
        return abci.ResponseCommit()

    # --- ABCI: queries --------------------------------------------------------------------------

    def query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        try:
            return self._query(req)
        except ABCIError as err:
            return abci.ResponseQuery(code=err.code, codespace=err.codespace, log=err.log, height=req.height)

    def _query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        latest = self.store.version
        height = req.height or latest
        if height > latest:
            raise ErrInvalidRequest.wrap(f"height {height} is not committed yet; latest is {latest}")
        path = "/" + req.path.lstrip("/")
        if path == "/store/key":
            return self._query_key(req.data, height, req.prove)
        if path == "/app/root":
            return abci.ResponseQuery(value=self._root_at(height), height=height)
        route = self.query_routes.get(path)
        if route is None:
            raise ErrUnknownRequest.wrap(f"unknown query path {req.path!r}")
        if height != latest:
            raise ErrInvalidRequest.wrap("module queries read the latest committed state; omit the height")
        request = route.request_type()
        try:
            request.ParseFromString(req.data)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise ErrTxDecode.wrap(f"malformed query request: {exc}") from None
        ctx = Context(CacheKV(self.store), BlockHeader(self.chain_id, latest, 0))
        return abci.ResponseQuery(value=route.handler(ctx, request).SerializeToString(), height=latest)

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


def _merge_routes(into: dict[str, Any], new: dict[str, Any], module: str) -> None:
    for route in new:
        if route in into:
            raise ValueError(f"route {route} registered twice (module {module})")
    into.update(new)
