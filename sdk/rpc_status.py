"""The gRPC status a registered error answers with, over gRPC and in a failed ABCI query's log.

The Cosmos SDK serves a module query over ABCI by calling its gRPC handler, so a failure's log is the Go text
of a gRPC status error, ``rpc error: code = NotFound desc = account X not found: key not found``. Clients
read that text: CosmJS's ``getAccount`` answers ``null`` for an unknown account only when its log says
``rpc error: code = NotFound``. One table serves both the gRPC server and the ABCI answer, so the two agree.
"""

from __future__ import annotations

import grpc

from sdk.errors import (
    ABCIError,
    ErrInsufficientFunds,
    ErrInvalidAddress,
    ErrInvalidRequest,
    ErrNotFound,
    ErrOutOfGas,
    ErrTxDecode,
)

# Keyed by (codespace, code) so that a failed transaction result maps like the error it came from.
_STATUS: dict[tuple[str, int], grpc.StatusCode] = {
    (e.codespace, e.code): status
    for e, status in (
        (ErrInvalidAddress, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrInvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrTxDecode, grpc.StatusCode.INVALID_ARGUMENT),
        (ErrNotFound, grpc.StatusCode.NOT_FOUND),
        (ErrInsufficientFunds, grpc.StatusCode.FAILED_PRECONDITION),
        (ErrOutOfGas, grpc.StatusCode.RESOURCE_EXHAUSTED),
    )
}


def status_code(err: ABCIError) -> grpc.StatusCode:
    return _STATUS.get((err.codespace, err.code), grpc.StatusCode.UNKNOWN)


def status_text(err: ABCIError) -> str:
    """What Go prints for ``status.Error(code, log)``: the code by its Go name (``NOT_FOUND`` is ``NotFound``)."""
    name = "".join(word.capitalize() for word in status_code(err).name.split("_"))
    return f"rpc error: code = {name} desc = {err.log}"
