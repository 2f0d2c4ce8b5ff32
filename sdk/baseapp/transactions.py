"""A transaction's way through BaseApp: decode -> stateless checks -> ante (signatures, sequences, fee) ->
route each message -> events; CheckTx and simulation run the same pipeline in their own modes.

Each transaction runs in branches of the state it applies to, so a failing transaction reverts only its
own writes; the ante handler's writes (fee, sequence) survive a failing message.
"""

from __future__ import annotations

from collections.abc import Sequence

from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from sdk.baseapp.core import Core, log
from sdk.baseapp.state import CommittedState
from sdk.codec import decode_strict
from sdk.context import MEMPOOL_MODES, BlockHeader, Context, ExecMode
from sdk.errors import ABCIError, ErrOutOfGas, ErrUnauthorized, ErrUnknownRequest
from sdk.gas import GasKV, GasMeter
from sdk.module import MsgRoute
from sdk.prepared import PreparedTx
from sdk.store.cachekv import CacheKV
from sdk.tx import Tx, decode_tx, validate_basic

INTERNAL_ERROR = 1


def result_of(err: ABCIError, gas_wanted: int, gas_used: int, events: Sequence[abci.Event] = ()) -> abci.ExecTxResult:
    return abci.ExecTxResult(
        code=err.code,
        codespace=err.codespace,
        log=err.log,
        gas_wanted=gas_wanted,
        gas_used=gas_used,
        events=list(events),
    )


class Transactions(Core):
    """CheckTx, the transaction pipeline, simulation, and the router for modules that carry messages."""

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        mode = ExecMode.RECHECK if req.type == abci.RECHECK else ExecMode.CHECK
        ctx = Context(self.check_state, self._check_header(), mode, min_gas_prices=self.min_gas_prices)
        result = self.run_tx_safely(ctx, req.tx)
        return abci.ResponseCheckTx(
            code=result.code,
            codespace=result.codespace,
            log=result.log,
            gas_wanted=result.gas_wanted,
            gas_used=result.gas_used,
            events=result.events,
        )

    def _check_header(self) -> BlockHeader:
        """The header CheckTx runs under, built once per committed height: a committed chain id never
        changes, so only one read while it is not committed yet (before the first block) is repeated."""
        height = self.store.version + 1
        header = self._last_check_header
        if header is None or header.height != height or not header.chain_id:
            header = BlockHeader(chain_id=self.chain_id, height=height, time_ns=0)
            self._last_check_header = header if self.pending_genesis is None else None
        return header

    def decode_messages(self, tx: Tx) -> list[tuple[MsgRoute, Message]]:
        return [self.decode_message(packed) for packed in tx.messages]

    def decode_message(self, packed: AnyPb) -> tuple[MsgRoute, Message]:
        """A packed message's route and its strict decode; ``sdk/6`` for a type no module routes."""
        route = self.msg_routes.get(packed.type_url)
        if route is None:
            raise ErrUnknownRequest.wrap(f"unrecognized message type {packed.type_url!r}")
        return route, decode_strict(route.msg_type, packed.value, packed.type_url, allow_non_critical=True)

    def signers_of(self, messages: list[tuple[MsgRoute, Message]]) -> list[bytes]:
        """Stateless checks of every message, then its signers in first-seen order."""
        signers: list[bytes] = []
        for route, msg in messages:
            route.validate_basic(msg)
            for signer in route.signers(msg):
                if signer not in signers:
                    signers.append(signer)
        return signers

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
            ante_branch = CacheKV(ctx.store)
            ante_ctx = Context(
                GasKV(ante_branch, meter),
                ctx.header,
                ctx.mode,
                meter,
                ctx.min_gas_prices,
                index_events=ctx.index_events,
            )
            self.ante(ante_ctx, tx, signers)
        except ABCIError as err:
            return result_of(err, gas_wanted, meter.consumed)
        if ctx.mode in MEMPOOL_MODES:
            result = abci.ExecTxResult(code=0, gas_wanted=gas_wanted, gas_used=meter.consumed)
            ante_branch.write()  # last: a tx the mempool refuses leaves the check state as it was
            return result
        ante_branch.write()
        return self._run_messages(ctx, ante_ctx, messages, gas_wanted, meter)

    def _run_messages(
        self,
        ctx: Context,
        ante_ctx: Context,
        messages: list[tuple[MsgRoute, Message]],
        gas_wanted: int,
        meter: GasMeter,
    ) -> abci.ExecTxResult:
        """The messages of a transaction whose ante handler passed, in one branch written only if all succeed."""
        msg_branch = CacheKV(ctx.store)
        msg_ctx = ante_ctx.with_store(GasKV(msg_branch, meter))
        responses = abci_types.TxMsgData()
        try:
            for route, msg in messages:
                msg_ctx.emit("message", action="/" + msg.DESCRIPTOR.full_name)
                response = route.handler(msg_ctx, msg)
                if response is not None:
                    # What Any.Pack(response, type_url_prefix="/") stores, without its generic path.
                    responses.msg_responses.add(
                        type_url="/" + response.DESCRIPTOR.full_name, value=response.SerializeToString()
                    )
        except ABCIError as err:
            return result_of(err, gas_wanted, meter.consumed, ante_ctx.events)
        msg_branch.write()
        ctx.validator_updates.extend(msg_ctx.validator_updates)
        return abci.ExecTxResult(
            code=0,
            data=responses.SerializeToString(),
            gas_wanted=gas_wanted,
            gas_used=meter.consumed,
            events=[*ante_ctx.events, *msg_ctx.events],
        )

    def run_tx_safely(self, ctx: Context, raw: bytes) -> abci.ExecTxResult:
        """A bug in a handler fails that transaction with a deterministic log; the node goes on."""
        try:
            return self.run_tx(ctx, raw)
        except Exception as exc:  # noqa: BLE001 - the state machine must not crash on one tx
            log.exception("internal error while executing a transaction")
            return abci.ExecTxResult(code=INTERNAL_ERROR, codespace="sdk", log=f"internal error: {type(exc).__name__}")

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
        atomically: in a branch of ``ctx``'s store that is written, with
        its events and validator updates, only if every message succeeds. Returns the responses (``Empty``
        where a handler returns none); raises the first failure's ABCIError, its log prefixed with the
        message's index and type, and then nothing of them applies."""
        branch = CacheKV(ctx.store)
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
        route, msg = self.decode_message(packed)
        route.validate_basic(msg)
        return route, msg
