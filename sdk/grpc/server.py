"""grpc.aio server on the node's event loop: module queries, tx and tendermint services, reflection.

Handlers are coroutines on the loop that serves ABCI. A module query or a simulation is bound, on the
loop and between two ABCI requests, to a snapshot of the committed state (``BaseApp.committed_job``)
and then awaited on the node's query workers (sdk/workers.py), so consensus is not held up behind
it; other state reads are done on the loop without awaiting. CometBFT RPC calls are awaited in a thread
so the loop keeps serving ABCI (BroadcastTx waits on CheckTx, which this same loop answers).

Module queries honour the Cosmos SDK's ``x-cosmos-block-height`` request header: a kept height's state
answers (read from that version, ``BaseApp.committed_job``), a malformed, negative or future one is
INVALID_ARGUMENT, a pruned one NOT_FOUND; every answer's initial metadata carries the header with the height
that answered (the latest without one). The tx and tendermint services answer from CometBFT or the latest
state and do not read it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from functools import partial

import grpc
from google.protobuf.message import Message
from grpc_reflection.v1alpha import reflection

from sdk.baseapp import BaseApp
from sdk.client.rpc import CometRPC, RPCError
from sdk.codec import decode
from sdk.errors import ABCIError, ErrInvalidRequest
from sdk.grpc.methods import CallContext, ContextHandler, ContextMethods, Handler, Service
from sdk.grpc.tendermint_service import TendermintService
from sdk.grpc.tx_service import TxService
from sdk.module import QueryRoute
from sdk.rpc_status import status_code
from sdk.workers import run_job

log = logging.getLogger("gonkad.grpc")

HEIGHT_HEADER = "x-cosmos-block-height"
_INT64 = re.compile(r"[+-]?[0-9]{1,19}")
"""What Go's strconv.ParseInt(text, 10, 64), which the Cosmos SDK reads the header with, takes (in range)."""

STOP_GRACE_S = 2.0


Observer = Callable[[str, float], None]
"""Told of each answered call: its method path and the seconds it took (the node's metrics, sdk/telemetry)."""


def unary_handler(
    path: str, request_type: type[Message], handler: ContextHandler, observe: Observer | None = None
) -> grpc.RpcMethodHandler:
    """The request is parsed here rather than by grpc so that bad bytes are INVALID_ARGUMENT, as over ABCI."""

    async def handle(data: bytes, context: grpc.aio.ServicerContext) -> bytes:
        started = time.perf_counter()
        try:
            request = decode(request_type, data, request_type.DESCRIPTOR.full_name)
            return (await handler(request, context)).SerializeToString()
        except Exception as exc:  # noqa: BLE001 - one failing call must not take the server down
            code, details = failure_status(exc, path)
        finally:
            if observe is not None:
                observe(path, time.perf_counter() - started)
        await context.abort(code, details)
        raise AssertionError("ServicerContext.abort ends the call by raising")

    return grpc.unary_unary_rpc_method_handler(handle)


def failure_status(exc: Exception, path: str) -> tuple[grpc.StatusCode, str]:
    """The status and message a failed call of ``path`` answers with (the REST gateway, sdk/rest, answers the
    same); an unexpected exception is logged and shown only by its type."""
    if isinstance(exc, ABCIError):
        return status_code(exc), exc.log
    if isinstance(exc, RPCError):
        return grpc.StatusCode.UNAVAILABLE, f"CometBFT RPC: {exc}"
    log.error("call %s failed", path, exc_info=exc)
    return grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}"


def requested_height(metadata: Sequence[tuple[str, str]] | None) -> int:
    """The height the call's ``x-cosmos-block-height`` header names (0 without one); ``sdk/18`` unless it is
    one base-10 int64 (its range against the chain is ``BaseApp.query_height``'s to check)."""
    values = [value for key, value in (metadata or ()) if key == HEIGHT_HEADER]
    if not values:
        return 0
    if len(values) > 1 or not _INT64.fullmatch(values[0]) or not -(2**63) <= int(values[0]) < 2**63:
        shown = values[0] if len(values) == 1 else values
        raise ErrInvalidRequest.wrap(f"invalid {HEIGHT_HEADER} header {shown!r}: not a base-10 int64")
    return int(values[0])


def query_services(app: BaseApp, workers: Executor | None) -> dict[str, ContextMethods]:
    """Every module query route, grouped by gRPC service ("/pkg.Service/Method")."""
    services: dict[str, ContextMethods] = {}
    for path, route in app.query_routes.items():
        service, _, method = path.lstrip("/").rpartition("/")
        if not service or not method:
            raise ValueError(f"query route {path!r} is not a gRPC method path")
        services.setdefault(service, {})[method] = (route.request_type, _query_handler(app, route, workers))
    return services


def _query_handler(app: BaseApp, route: QueryRoute, workers: Executor | None) -> ContextHandler:
    async def handle(request: Message, context: CallContext) -> Message:
        height = app.query_height(requested_height(context.invocation_metadata()))
        await context.send_initial_metadata(((HEIGHT_HEADER, str(height)),))
        if route.bounded and height == app.store.version:
            return app.query_bounded(route, request)
        # The snapshot holds committed state only: a block staged but not yet committed is invisible.
        return await run_job(workers, app.committed_job(partial(app.query_module, route, request), height))

    return handle


def _without_context(handler: Handler) -> ContextHandler:
    async def handle(request: Message, context: CallContext) -> Message:
        return await handler(request)

    return handle


class GRPCServer:
    """Serves ``app`` over gRPC on ``address`` ("host:port"; port 0 picks one, see ``port``).

    ``workers`` run module queries and simulations; None runs them on the loop (tests, tools). ``observe``: told
    of each answered call.
    """

    def __init__(
        self,
        app: BaseApp,
        address: str,
        comet_rpc: str,
        workers: Executor | None = None,
        observe: Observer | None = None,
    ) -> None:
        self.app = app
        self.observe = observe
        self.address = address
        self.rpc = CometRPC(comet_rpc)
        self.workers = workers
        self.port = 0
        self._server: grpc.aio.Server | None = None

    def services(self) -> dict[str, ContextMethods]:
        services = query_services(self.app, self.workers)
        own: tuple[Service, ...] = (TxService(self.app, self.rpc, self.workers), TendermintService(self.app, self.rpc))
        for service in own:
            if service.NAME in services:
                raise ValueError(f"service {service.NAME} is also registered by a module")
            services[service.NAME] = {
                method: (request_type, _without_context(handler))
                for method, (request_type, handler) in service.methods().items()
            }
        return services

    async def start(self) -> None:
        """Bind and serve; must run inside the loop that serves ABCI."""
        server = grpc.aio.server()
        services = self.services()
        server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    name,
                    {
                        method: unary_handler(f"/{name}/{method}", request_type, handler, self.observe)
                        for method, (request_type, handler) in methods.items()
                    },
                )
                for name, methods in services.items()
            ]
        )
        reflection.enable_server_reflection([*sorted(services), reflection.SERVICE_NAME], server)
        self.port = server.add_insecure_port(self.address)
        await server.start()
        self._server = server
        host = self.address.rpartition(":")[0]
        log.info("gRPC server on %s:%d: %s", host, self.port, ", ".join(sorted(services)))

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(STOP_GRACE_S)
            self._server = None
