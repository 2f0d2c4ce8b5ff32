"""grpc.aio server on the node's event loop: module queries, tx and tendermint services, reflection.

Every handler is a coroutine that does its state reads without awaiting, so it runs between two ABCI
requests, never inside one; CometBFT RPC calls are awaited in a thread so the loop keeps serving ABCI
(BroadcastTx waits on CheckTx, which this same loop answers).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message
from grpc_reflection.v1alpha import reflection

from gonkad.baseapp import BaseApp
from gonkad.config import read_cometbft_config, split_address
from gonkad.context import BlockHeader, Context
from gonkad.errors import (
    ABCIError,
    ErrInsufficientFunds,
    ErrInvalidAddress,
    ErrInvalidRequest,
    ErrNotFound,
    ErrTxDecode,
)
from gonkad.grpcserver.tendermint_service import TendermintService
from gonkad.grpcserver.tx_service import TxService
from gonkad.module import QueryRoute
from gonkad.rpc import CometRPC, RPCError
from gonkad.store.cachekv import CacheKV

log = logging.getLogger("gonkad.grpc")

Handler = Callable[[Any], Awaitable[Message]]
Methods = dict[str, tuple[type[Message], Handler]]
"""One service's implemented methods: method name -> (request type, coroutine answering it)."""

DEFAULT_COMET_RPC = "tcp://127.0.0.1:26657"
STOP_GRACE_S = 2.0

# Keyed by (codespace, code) so that a failed transaction result maps like the error it came from.
_STATUS: dict[tuple[str, int], grpc.StatusCode] = {
    (e.codespace, e.code): status
    for e, status in (
        (ErrInvalidAddress, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrInvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrTxDecode, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrNotFound, grpc.StatusCode.NOT_FOUND),
        (ErrInsufficientFunds, grpc.StatusCode.FAILED_PRECONDITION),
    )
}


def status_code(err: ABCIError) -> grpc.StatusCode:
    return _STATUS.get((err.codespace, err.code), grpc.StatusCode.UNKNOWN)


def comet_rpc_address(home: Path) -> str:
    """CometBFT's RPC listen address from the node home; the default when gonkad runs without one."""
    try:
        return str(read_cometbft_config(home)["rpc"]["laddr"])
    except FileNotFoundError:
        return DEFAULT_COMET_RPC


def unary_handler(path: str, request_type: type[Message], handler: Handler) -> grpc.RpcMethodHandler:
    """The request is parsed here rather than by grpc so that bad bytes are INVALID_ARGUMENT, as over ABCI."""

    async def handle(data: bytes, context: grpc.aio.ServicerContext) -> bytes:
        try:
            try:
                request = request_type.FromString(data)
            except (DecodeError, RecursionError, ValueError) as exc:
                raise ErrTxDecode.wrap(f"malformed {request_type.DESCRIPTOR.full_name}: {exc}") from None
            return (await handler(request)).SerializeToString()
        except ABCIError as err:
            code, details = status_code(err), err.log
        except RPCError as err:
            code, details = grpc.StatusCode.UNAVAILABLE, f"CometBFT RPC: {err}"
        except Exception as exc:  # noqa: BLE001 - one failing call must not take the server down
            log.exception("gRPC %s failed", path)
            code, details = grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}"
        await context.abort(code, details)

    return grpc.unary_unary_rpc_method_handler(handle)


def query_services(app: BaseApp) -> dict[str, Methods]:
    """Every module query route, grouped by gRPC service ("/pkg.Service/Method")."""
    services: dict[str, Methods] = {}
    for path, route in app.query_routes.items():
        service, _, method = path.lstrip("/").rpartition("/")
        if not service or not method:
            raise ValueError(f"query route {path!r} is not a gRPC method path")
        services.setdefault(service, {})[method] = (route.request_type, _query_handler(app, route))
    return services


def _query_handler(app: BaseApp, route: QueryRoute) -> Handler:
    async def handle(request: Message) -> Message:
        # CommitStore.get/iterate only ever show committed state: a staged block is invisible here.
        latest = app.store.version
        return route.handler(Context(CacheKV(app.store), BlockHeader(app.chain_id, latest, 0)), request)

    return handle


class GRPCServer:
    """Serves ``app`` over gRPC on ``address`` ("host:port"; port 0 picks one, see ``port``)."""

    def __init__(self, app: BaseApp, address: str, comet_rpc: str) -> None:
        self.app = app
        self.address = address
        self.rpc = CometRPC(comet_rpc)
        self.port = 0
        self._server: grpc.aio.Server | None = None

    def services(self) -> dict[str, Methods]:
        services = query_services(self.app)
        for service in (TxService(self.app, self.rpc), TendermintService(self.app, self.rpc)):
            if service.NAME in services:
                raise ValueError(f"service {service.NAME} is also registered by a module")
            services[service.NAME] = service.methods()
        return services

    async def start(self) -> None:
        """Bind and serve; must run inside the loop that serves ABCI."""
        server = grpc.aio.server()
        services = self.services()
        server.add_generic_rpc_handlers([
            grpc.method_handlers_generic_handler(name, {
                method: unary_handler(f"/{name}/{method}", request_type, handler)
                for method, (request_type, handler) in methods.items()
            })
            for name, methods in services.items()
        ])
        reflection.enable_server_reflection([*sorted(services), reflection.SERVICE_NAME], server)
        self.port = server.add_insecure_port(self.address)
        await server.start()
        self._server = server
        host, _ = split_address(self.address)
        log.info("gRPC server on %s:%d: %s", host, self.port, ", ".join(sorted(services)))

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(STOP_GRACE_S)
            self._server = None
