"""The framework's own metrics: what the ABCI server and the gRPC server see of each call.

The servers call ``observe_abci`` and ``observe_grpc_query`` after each answer, on the node's event loop, with
the time the call took (wall clock: these are this node's observations and never feed state). A block's
figures are summed once per FinalizeBlock (about a microsecond a tx); a CheckTx costs one pre-bound counter
increment.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable

from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from sdk.abci.blocks import is_injected_entry
from sdk.errors import ErrUnknownRequest

UNKNOWN_METHOD = "unknown"
"""The method label of an ABCI query for a path no route answers (the path is the client's to choose)."""


class NodeMetrics:
    """Blocks, txs by result, gas, FinalizeBlock and Commit time, mempool admissions and query latency, in
    ``registry`` (the node's own, never the library's process-wide default)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.height = Gauge("gonkad_block_height", "Height of the last finalized block.", registry=registry)
        self.blocks = Counter("gonkad_blocks", "Blocks finalized by this node since it started.", registry=registry)
        self.txs = Counter(
            "gonkad_txs", "Transactions delivered in blocks, by result.", ["codespace", "code"], registry=registry
        )
        self._txs_ok = self.txs.labels("", "0")
        self.gas_used = Counter("gonkad_gas_used", "Gas used by delivered transactions.", registry=registry)
        self.gas_wanted = Counter("gonkad_gas_wanted", "Gas limit of delivered transactions.", registry=registry)
        self.block_events = Counter(
            "gonkad_block_events",
            "Events of blocks' own (begin and end block, injected entries) by type: e.g. slash for downtime, "
            "double signing or a race cheater. Transactions' events are not counted: reading them costs a send.",
            ["type"],
            registry=registry,
        )
        self.finalize_seconds = Histogram(
            "gonkad_finalize_block_seconds", "Time the app took to execute a block (FinalizeBlock).", registry=registry
        )
        self.commit_seconds = Histogram(
            "gonkad_commit_seconds", "Time the app took to persist a block (Commit).", registry=registry
        )
        check_tx = Counter(
            "gonkad_check_tx",
            "Mempool admissions (CheckTx): type new or recheck, result accepted or refused.",
            ["type", "result"],
            registry=registry,
        )
        self._check_tx = {
            (recheck, accepted): check_tx.labels("recheck" if recheck else "new", "accepted" if accepted else "refused")
            for recheck in (False, True)
            for accepted in (False, True)
        }
        self.query_seconds = Histogram(
            "gonkad_query_seconds",
            "Time to answer a query, by server (abci or grpc) and method.",
            ["server", "method"],
            registry=registry,
        )
        self._abci: dict[str, Callable[[Message, Message, float], None]] = {
            "finalize_block": self._finalize_block,
            "commit": lambda req, res, seconds: self.commit_seconds.observe(seconds),
            "check_tx": self._check,
            "query": self._query,
        }

    def observe_abci(self, kind: str, request: Message, response: Message, seconds: float) -> None:
        """One answered ABCI request (``kind``: the Request oneof's name) and the seconds it took."""
        observe = self._abci.get(kind)
        if observe is not None:
            observe(request, response, seconds)

    def observe_grpc_query(self, method: str, seconds: float) -> None:
        """One answered gRPC call (``/pkg.Service/Method``: only registered methods reach a handler)."""
        self.query_seconds.labels("grpc", method).observe(seconds)

    def _finalize_block(self, req: abci.RequestFinalizeBlock, res: abci.ResponseFinalizeBlock, seconds: float) -> None:
        self.finalize_seconds.observe(seconds)
        self.height.set(req.height)
        self.blocks.inc()
        failed: Tally[tuple[str, int]] = Tally()
        ok = used = wanted = 0
        for raw, result in zip(req.txs, res.tx_results):
            if is_injected_entry(raw):
                continue
            if result.code:
                failed[(result.codespace, result.code)] += 1
            else:
                ok += 1
            used += result.gas_used
            wanted += result.gas_wanted
        if ok:
            self._txs_ok.inc(ok)
        for (codespace, code), count in failed.items():
            self.txs.labels(codespace, str(code)).inc(count)
        self.gas_used.inc(used)
        self.gas_wanted.inc(wanted)
        for kind, count in Tally(event.type for event in res.events).items():
            self.block_events.labels(kind).inc(count)

    def _check(self, req: abci.RequestCheckTx, res: abci.ResponseCheckTx, seconds: float) -> None:
        self._check_tx[(req.type == abci.RECHECK, res.code == 0)].inc()

    def _query(self, req: abci.RequestQuery, res: abci.ResponseQuery, seconds: float) -> None:
        unknown = (res.codespace, res.code) == (ErrUnknownRequest.codespace, ErrUnknownRequest.code)
        method = UNKNOWN_METHOD if unknown else "/" + req.path.lstrip("/")
        self.query_seconds.labels("abci", method).observe(seconds)
