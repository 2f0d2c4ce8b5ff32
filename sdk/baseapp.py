"""BaseApp: the transaction pipeline and the ABCI state machine every module plugs into.

decode -> stateless checks -> ante (signatures, sequences, fee) -> route each message -> events.
Block state lives in a branch of the committed store; each transaction runs in branches of that, so a
failing transaction reverts only its own writes. Only ``Commit`` persists, in one atomic batch.

Threading: every ABCI call runs on the node's event loop, one at a time, except the job a module query
or a simulation becomes (``begin_query``): that reads only a snapshot of the committed state, taken on
the loop, and may run on a worker thread (sdk/workers.py) while blocks execute and commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from fractions import Fraction
from typing import Any, TypeVar

from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.cosmos.base.node.v1beta1 import query_pb2 as node_query
from cosmpy.protos.cosmos.consensus.v1 import query_pb2 as consensus_query
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import proof_pb2
from cosmpy.protos.tendermint.types import params_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from sdk.abci.application import Application
from sdk.coins import format_dec_coins
from sdk.abci.blocks import (
    BlockInfo, VoteExtension, block_info, decode_injected_entry, decode_vote_extension, encode_injected_entry,
    encode_vote_extension, fit_txs, is_injected_entry, proto_tx_size, time_ns,
)
from sdk.context import MEMPOOL_MODES, BlockHeader, Context, ExecMode, KVStore
from sdk.gas import DEFAULT_SIMULATION_GAS_LIMIT, GasKV, GasMeter
from sdk.errors import ABCIError, ErrInvalidRequest, ErrNotFound, ErrOutOfGas, ErrUnauthorized, ErrUnknownRequest
from sdk.module import Module, MsgRoute, QueryRoute, run_hook
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore, Snapshot, UnprovableError, VersionSnapshot, VersionUnavailableError
from sdk.store.proof import PROOF_OP_TYPE
from sdk.codec import decode, decode_strict
from sdk.invariants import Invariant, InvariantBroken, broken_invariants
from sdk.prepared import PreparedCache, PreparedTx
from sdk.tx import Tx, decode_tx, validate_basic

log = logging.getLogger("gonkad.app")

AnteHandler = Callable[[Context, Tx, list[bytes]], None]
T = TypeVar("T")
QueryJob = Callable[[], abci.ResponseQuery]
CommittedState = Snapshot | VersionSnapshot
"""A committed version frozen for a job: the latest, or a kept older one for a query at its height."""
CommittedWork = Callable[[CommittedState, BlockHeader], T]
"""What a job does with the committed state: its snapshot and the header of its block."""
STORE_PREFIX = b"baseapp/"
"""State the framework owns, written at InitChain; no module's prefix may overlap it."""
CHAIN_ID_KEY = STORE_PREFIX + b"chain_id"
CONSENSUS_PARAMS_KEY = STORE_PREFIX + b"consensus_params"
CONSENSUS_PARAMS_QUERY = "/cosmos.consensus.v1.Query/Params"
NODE_CONFIG_QUERY = "/cosmos.base.node.v1beta1.Service/Config"
APP_VERSION = 1
INTERNAL_ERROR = 1


def result_of(err: ABCIError, gas_wanted: int, gas_used: int, events: Sequence[abci.Event] = ()) -> abci.ExecTxResult:
    return abci.ExecTxResult(
        code=err.code, codespace=err.codespace, log=err.log, gas_wanted=gas_wanted, gas_used=gas_used,
        events=list(events),
    )


def stored_chain_id(state: CacheKV | CommitStore) -> str:
    """The chain id is state written at InitChain, so a restarted node knows it without the genesis file."""
    raw = state.get(CHAIN_ID_KEY)
    return raw.decode() if raw else ""


def stored_consensus_params(state: KVStore) -> params_pb2.ConsensusParams | None:
    """CometBFT's consensus params (block gas and size limits, evidence, validator key types) as the chain
    last set them; None before InitChain gave any."""
    raw = state.get(CONSENSUS_PARAMS_KEY)
    return None if raw is None else params_pb2.ConsensusParams.FromString(raw)


def store_consensus_params(state: KVStore, params: params_pb2.ConsensusParams) -> None:
    """The one writer of the consensus params: InitChain, and the authority's update (x/consensus)."""
    state.set(CONSENSUS_PARAMS_KEY, params.SerializeToString())


def changed_consensus_params(
    before: params_pb2.ConsensusParams | None, after: params_pb2.ConsensusParams | None
) -> params_pb2.ConsensusParams | None:
    """The params to hand CometBFT in ``consensus_param_updates``: the stored ones if the block changed them
    (CometBFT applies them from the next height on), else none. Never the version section: CometBFT would
    take its ``app`` as the block headers' app version, which is the app's to say (Info), not an update's."""
    if after is None or after == before:
        return None
    update = params_pb2.ConsensusParams()
    update.CopyFrom(after)
    update.ClearField("version")
    return update


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
        check_invariants: bool = False,
        module_config: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """``check_invariants``: check every module's invariants after each block and halt on a broken one.
        ``module_config``: node-local settings by module name (from the node's home, never from state),
        handed to each module's ``configure`` once, here."""
        self.store = store
        self.simulation_gas_limit = simulation_gas_limit
        self.min_gas_prices = min_gas_prices
        self.index_events = index_events
        self.modules = list(modules)
        self.ante = ante
        self.name = name
        self.msg_routes: dict[str, MsgRoute] = {}
        self.query_routes: dict[str, QueryRoute] = self.framework_query_routes()
        prefixes: set[bytes] = {STORE_PREFIX}
        for module in self.modules:
            if any(p.startswith(module.store_prefix) or module.store_prefix.startswith(p) for p in prefixes):
                raise ValueError(f"module {module.name} store prefix {module.store_prefix!r} overlaps another")
            prefixes.add(module.store_prefix)
            _merge_routes(self.msg_routes, module.msg_routes(), module.name)
            _merge_routes(self.query_routes, module.query_routes(), module.name)
        configs = dict(module_config or {})
        unknown_config = sorted(set(configs) - {m.name for m in self.modules})
        if unknown_config:
            raise ValueError(f"node-local config for unknown modules: {', '.join(unknown_config)}")
        for module in self.modules:
            module.configure(configs.get(module.name, {}))
        self.pending_genesis: CacheKV | None = None
        self.genesis_app_hash = b""
        self.check_state = CacheKV(store)
        self.prepared = PreparedCache(self.prepare)
        self.check_invariants = check_invariants
        self.invariants: dict[str, Invariant] = {
            f"{module.name}/{name}": invariant
            for module in self.modules
            for name, invariant in module.invariants().items()
        }

    # --- the framework's own queries --------------------------------------------------------

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

    # --- helpers ---------------------------------------------------------------------------

    @property
    def chain_id(self) -> str:
        return stored_chain_id(self.pending_genesis or self.store)

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

    # --- the router, for modules that carry messages (governance proposals) -----------------------
    # A module that stores messages to run later gets these two bound methods at wiring (app.py), never
    # the app: ``packed_signers`` when it accepts the messages, ``execute_packed`` when it runs them.

    def packed_signers(self, packed: AnyPb) -> list[bytes]:
        """The signers of one packed message, after the checks a transaction's message gets without state:
        a known type (``sdk/6`` unknown request otherwise), a strict decode, its ``validate_basic``. Raises
        the ABCIError of the first check that fails."""
        route, msg = self._checked_packed(packed)
        return list(route.signers(msg))

    def execute_packed(self, ctx: Context, signer: bytes, packed: Sequence[AnyPb]) -> list[Message]:
        """Run ``packed`` in order as ``signer`` (who must be each message's only signer, else ``sdk/4``),
        atomically: in a branch of ``ctx`` (a branchable store, e.g. a block hook's) that is written, with
        its events and validator updates, only if every message succeeds. Returns the responses (``Empty``
        where a handler returns none); raises the first failure's ABCIError, its log prefixed with the
        message's index and type, and then nothing of them applies."""
        branch = ctx.store.branch()  # type: ignore[attr-defined]
        sub = ctx.with_store(branch)
        responses: list[Message] = []
        for index, one in enumerate(packed):
            try:
                route, msg = self._checked_packed(one)
                signers = list(route.signers(msg))
                if signers != [signer]:
                    raise ErrUnauthorized.wrap(f"signers {[s.hex() for s in signers]} are not exactly {signer.hex()}")
                sub.emit("message", action=one.type_url)
                response = route.handler(sub, msg)
            except ABCIError as err:
                where = f"message {index} ({one.type_url})"
                raise ABCIError(err.kind, f"{where}: {err.detail}" if err.detail else where) from None
            responses.append(response if response is not None else Empty())
        branch.write()
        ctx.events.extend(sub.events)
        ctx.validator_updates.extend(sub.validator_updates)
        return responses

    def _checked_packed(self, packed: AnyPb) -> tuple[MsgRoute, Message]:
        route = self.msg_routes.get(packed.type_url)
        if route is None:
            raise ErrUnknownRequest.wrap(f"unrecognized message type {packed.type_url!r}")
        msg = decode_strict(route.msg_type, packed.value, packed.type_url, allow_non_critical=True)
        route.validate_basic(msg)
        return route, msg

    def prepare(self, raw: bytes) -> PreparedTx:
        """Every check of a tx that needs no state; the same bytes always give the same answer."""
        tx = decode_tx(raw)
        validate_basic(tx)
        messages = self.decode_messages(tx)
        return PreparedTx(tx, messages, self.signers_of(messages))

    def run_tx(self, ctx: Context, raw: bytes) -> abci.ExecTxResult:
        """One transaction: ante writes survive a failing message (fee and sequence), message writes do not.

        ``ctx.store`` is the branch the transaction applies to (block state, check state or a throwaway
        branch for simulation); gas is metered on every store access from the ante handler on.
        """
        meter = GasMeter(0)
        gas_wanted = 0
        try:
            # Simulations may run on a query worker: they leave the loop's cache alone.
            prepared = self.prepare(raw) if ctx.mode is ExecMode.SIMULATE else self.prepared.get(raw)
            tx, messages, signers = prepared.tx, prepared.messages, prepared.signers
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

    def simulate(self, raw: bytes, state: CommittedState, header: BlockHeader) -> abci.ExecTxResult:
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
        if req.initial_height > 1:  # e.g. an exported chain's next height: store versions stay block heights
            self.store.set_initial_version(req.initial_height)
        state = CacheKV(self.store)
        state.set(CHAIN_ID_KEY, req.chain_id.encode())
        if req.HasField("consensus_params"):  # CometBFT always sends genesis.json's
            store_consensus_params(state, req.consensus_params)
        # Height 0: genesis transactions are signed with account number 0, as in the Cosmos SDK.
        ctx = Context(state, BlockHeader(req.chain_id, 0, time_ns(req.time)))
        for module in self.modules:
            module.init_genesis(ctx, app_state.get(module.name, module.default_genesis()))
        self.pending_genesis = state
        self.genesis_app_hash = self.store.apply(state.changes())
        # The validators the gentxs created; none keeps the set in CometBFT's genesis.json.
        return abci.ResponseInitChain(app_hash=self.genesis_app_hash, validators=ctx.validator_updates)

    def export_app_state(self, height: int | None = None) -> dict[str, Any]:
        """Every module's ``export_genesis`` over the state committed at ``height`` (default: the latest), by
        module name: the app_state of a genesis whose chain starts with the same module state.

        Raises VersionUnavailableError for a height the store no longer keeps (or never had).
        """
        version = self.store.version if height is None else height
        state = CacheKV(self.store.state_at(version))  # a branch: an export never writes to the store
        ctx = Context(state, BlockHeader(stored_chain_id(state), version, 0))
        return {module.name: module.export_genesis(ctx) for module in self.modules}

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
        block = block_info(req, self.header_app_hash())
        state = self.pending_genesis or CacheKV(self.store)
        self.pending_genesis = None
        header = BlockHeader(stored_chain_id(state), req.height, block.time_ns, req.proposer_address)
        ctx = Context(state, header)
        consensus_params_before = stored_consensus_params(state)
        for module in self.modules:
            self.run_in_branch(ctx, module.name, "begin_block", lambda c, m=module: m.begin_block(c, block))
        results = [
            self.deliver_entry(ctx, block, raw) if is_injected_entry(raw) else self.run_tx_safely(ctx, raw)
            for raw in req.txs
        ]
        for module in self.modules:
            self.run_in_branch(ctx, module.name, "end_block", lambda c, m=module: m.end_block(c, block))
        if self.check_invariants:
            self.assert_invariants(Context(state, header))
        app_hash = self.store.apply(state.changes())
        if self.index_events:
            mark_events_to_index(self.index_events, [ctx.events, *(r.events for r in results)])
        return abci.ResponseFinalizeBlock(
            events=ctx.events, tx_results=results, app_hash=app_hash, validator_updates=ctx.validator_updates,
            consensus_param_updates=changed_consensus_params(consensus_params_before, stored_consensus_params(state)),
        )

    def run_in_branch(
        self, ctx: Context, module: str, hook: str, call: Callable[[Context], None]
    ) -> Exception | None:
        """A module's block hook, run by ``run_hook`` (sdk/module.py): only a hook that returns keeps its
        writes, so a bug in one module's hook never stops the chain."""
        return run_hook(ctx, f"{hook} of module {module}", call)

    def deliver_entry(self, ctx: Context, block: BlockInfo, raw: bytes) -> abci.ExecTxResult:
        """An injected proposal entry in FinalizeBlock, handed to its module's ``deliver_entry`` (never
        decoded as a tx); its result takes the entry's place in ``tx_results``."""
        try:
            name, payload = decode_injected_entry(raw)
            module = self.module_named(name)
        except ValueError as exc:
            return result_of(ErrInvalidRequest.wrap(f"injected entry: {exc}"), 0, 0)
        failure = self.run_in_branch(
            ctx, name, "deliver_entry", lambda c: module.deliver_entry(c, block, payload)
        )
        if isinstance(failure, ABCIError):
            return result_of(failure, 0, 0)
        if failure is not None:
            return abci.ExecTxResult(code=INTERNAL_ERROR, codespace="sdk",
                                     log=f"injected entry of module {name} failed: {type(failure).__name__}")
        return abci.ExecTxResult(code=0)

    def header_app_hash(self) -> bytes:
        """The app hash the next block's header carries: the last committed root, or InitChain's before the
        first block (whose FinalizeBlock commits the genesis state)."""
        return self.genesis_app_hash if self.pending_genesis is not None else self.store.root_hash

    def module_named(self, name: str) -> Module:
        for module in self.modules:
            if module.name == name:
                return module
        raise ValueError(f"no module {name!r}")

    # --- ABCI 2.0: proposals and vote extensions ---------------------------------------------------
    # Each hook runs over a throwaway branch of the state the block builds on (the genesis state before the
    # first block commits), module by module in app order. A module hook that raises is logged; it then
    # adds nothing (extend_vote, prepare_proposal) or rejects (verify_vote_extension, process_proposal).

    def proposal_context(self, block: BlockInfo) -> Context:
        """A context over a throwaway branch of the state ``block`` builds on; its writes are discarded."""
        state = self.pending_genesis.branch() if self.pending_genesis is not None else CacheKV(self.store)
        return Context(state, BlockHeader(stored_chain_id(state), block.height, block.time_ns, block.proposer))

    def prepare_proposal(self, req: abci.RequestPrepareProposal) -> abci.ResponsePrepareProposal:
        """Module entries first (app order), then the mempool's txs in order, all within ``max_tx_bytes``."""
        block = block_info(req, self.header_app_hash())
        extensions = self.last_vote_extensions(req.local_last_commit)
        entries: list[bytes] = []
        for module in self.modules:
            try:
                payload = module.prepare_proposal(self.proposal_context(block), block, extensions.get(module.name, []))
            except Exception:  # noqa: BLE001 - a module's bug costs its entry, not the proposal
                log.exception("prepare_proposal of module %s failed at height %d", module.name, block.height)
                continue
            if payload is not None:
                entries.append(encode_injected_entry(module.name, payload))
        entries = fit_txs(entries, req.max_tx_bytes)
        used = sum(proto_tx_size(entry) for entry in entries)
        txs = fit_txs([tx for tx in req.txs if not is_injected_entry(tx)], req.max_tx_bytes, used)
        return abci.ResponsePrepareProposal(txs=[*entries, *txs])

    def last_vote_extensions(self, commit: abci.ExtendedCommitInfo) -> dict[str, list[VoteExtension]]:
        """Each module's parts of the last height's vote extensions (from votes for the block), by module."""
        names = [m.name for m in self.modules]
        by_module: dict[str, list[VoteExtension]] = {}
        for vote in commit.votes:
            if not vote.vote_extension:
                continue
            try:
                parts = decode_vote_extension(vote.vote_extension, names)
            except ValueError:  # CometBFT verified it with verify_vote_extension; never expected
                log.warning("skipping a malformed vote extension of validator %s", vote.validator.address.hex())
                continue
            for name, data in parts.items():
                by_module.setdefault(name, []).append(VoteExtension(vote.validator.address, vote.validator.power, data))
        return by_module

    def process_proposal(self, req: abci.RequestProcessProposal) -> abci.ResponseProcessProposal:
        """Injected entries only at the head, well-formed, at most one per module and in app order; then
        every module's ``process_proposal`` must accept."""
        block = block_info(req, self.header_app_hash())
        order = {m.name: i for i, m in enumerate(self.modules)}
        entries: dict[str, bytes] = {}
        last, at_head = -1, True
        for raw in req.txs:
            if not is_injected_entry(raw):
                at_head = False
                continue
            try:
                name, payload = decode_injected_entry(raw)
            except ValueError:
                name, payload = "", b""
            if not at_head or order.get(name, -1) <= last:
                log.info("rejecting the proposal at height %d: a misplaced or malformed injected entry", block.height)
                return abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.REJECT)
            entries[name], last = payload, order[name]
        for module in self.modules:
            try:
                accepted = module.process_proposal(self.proposal_context(block), block, entries.get(module.name))
            except Exception:  # noqa: BLE001 - deterministic: every node's copy of the module raises alike
                log.exception("process_proposal of module %s failed at height %d", module.name, block.height)
                accepted = False
            if not accepted:
                log.info("module %s rejects the proposal at height %d", module.name, block.height)
                return abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.REJECT)
        return abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.ACCEPT)

    def extend_vote(self, req: abci.RequestExtendVote) -> abci.ResponseExtendVote:
        """Every module's part, combined into one extension (``sdk/abci/blocks.py``)."""
        block = block_info(req, self.header_app_hash())
        parts: dict[str, bytes] = {}
        for module in self.modules:
            try:
                parts[module.name] = module.extend_vote(self.proposal_context(block), block)
            except Exception:  # noqa: BLE001 - a module's bug costs its part, not the vote
                log.exception("extend_vote of module %s failed at height %d", module.name, block.height)
        return abci.ResponseExtendVote(vote_extension=encode_vote_extension(parts))

    def verify_vote_extension(self, req: abci.RequestVerifyVoteExtension) -> abci.ResponseVerifyVoteExtension:
        """Well-formed, and every module accepts its part (b"" where the validator sent none)."""
        reject = abci.ResponseVerifyVoteExtension(status=abci.ResponseVerifyVoteExtension.REJECT)
        try:
            parts = decode_vote_extension(req.vote_extension, [m.name for m in self.modules])
        except ValueError as exc:
            log.info("rejecting the vote extension of %s at height %d: %s", req.validator_address.hex(), req.height, exc)
            return reject
        block = BlockInfo(height=req.height, time_ns=0, hash=req.hash, app_hash=self.header_app_hash())
        for module in self.modules:
            try:
                accepted = module.verify_vote_extension(
                    self.proposal_context(block), block, req.validator_address, parts.get(module.name, b"")
                )
            except Exception:  # noqa: BLE001 - deterministic: a raising verifier rejects everywhere
                log.exception("verify_vote_extension of module %s failed at height %d", module.name, req.height)
                accepted = False
            if not accepted:
                log.info("module %s rejects the vote extension of %s at height %d",
                         module.name, req.validator_address.hex(), req.height)
                return reject
        return abci.ResponseVerifyVoteExtension(status=abci.ResponseVerifyVoteExtension.ACCEPT)

    def assert_invariants(self, ctx: Context) -> None:
        """Raise InvariantBroken, naming each broken invariant, if the state breaks any."""
        broken = broken_invariants(ctx, self.invariants)
        if broken:
            log.critical("halting: %s", "; ".join(broken))
            raise InvariantBroken(ctx.header.height, broken)

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        self.store.commit()
        self.check_state = CacheKV(self.store)
        return abci.ResponseCommit()

    # --- ABCI: queries --------------------------------------------------------------------------

    # Proofs and historic reads (``/store/key``, ``/app/root``) walk the Merkle tree through the store's
    # node cache, which only the loop thread may touch: they are answered at once. Module queries and
    # simulations become jobs over a snapshot: of the latest state, or for a module query at a past kept
    # height (ABCI's ``height``, gRPC's ``x-cosmos-block-height``) of that version, read without the cache.

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

    def _query(self, req: abci.RequestQuery) -> abci.ResponseQuery | QueryJob:
        height = self.query_height(req.height)
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
        request = decode(route.request_type, req.data, "query request")
        if route.bounded and height == self.store.version:
            return abci.ResponseQuery(value=self.query_bounded(route, request).SerializeToString(), height=height)
        return self._query_job(req.height, partial(self._query_route, route, request), height)

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
        self, route: QueryRoute, request: Message, state: CommittedState, header: BlockHeader
    ) -> abci.ResponseQuery:
        value = self.query_module(route, request, state, header).SerializeToString()
        return abci.ResponseQuery(value=value, height=header.height)

    def _query_simulate(self, raw_tx: bytes, state: CommittedState, header: BlockHeader) -> abci.ResponseQuery:
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
        try:
            value, proof = self.store.prove(key, height)
        except UnprovableError as exc:
            raise ErrInvalidRequest.wrap(str(exc)) from None
        op = proof_pb2.ProofOp(type=PROOF_OP_TYPE, key=key, data=proof)
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
