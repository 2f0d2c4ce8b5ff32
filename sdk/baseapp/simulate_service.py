"""``cosmos.tx.v1beta1.Service/Simulate``'s request and answer, one form for its two doors: the gRPC server
and the ABCI query route of the same path (the Cosmos SDK registers the tx service on its query router, so
CosmJS simulates with ``abci_query``)."""

from __future__ import annotations

from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as sdk_abci
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2, tx_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.errors import ABCIError, ErrInvalidRequest, ErrorDef

SIMULATE_PATH = "/cosmos.tx.v1beta1.Service/Simulate"


def simulated_tx_bytes(req: service_pb2.SimulateRequest) -> bytes:
    """The transaction to simulate: ``tx_bytes``, or the deprecated ``tx`` field encoded as a ``TxRaw``."""
    raw = req.tx_bytes
    if not raw and req.HasField("tx"):
        raw = tx_pb2.TxRaw(
            body_bytes=req.tx.body.SerializeToString(),
            auth_info_bytes=req.tx.auth_info.SerializeToString(),
            signatures=req.tx.signatures,
        ).SerializeToString()
    if not raw:
        raise ErrInvalidRequest.wrap("empty txBytes is not allowed")
    return raw


def simulate_response(result: abci.ExecTxResult) -> service_pb2.SimulateResponse:
    """The answer to a simulation that passed; one that failed raises its own codespace and code (so it maps to
    a gRPC status as the transaction's error would), the gas in its log."""
    if result.code:
        log = f"{result.log} (gas wanted {result.gas_wanted}, gas used {result.gas_used})"
        raise ABCIError(ErrorDef(result.codespace, result.code, log))
    return service_pb2.SimulateResponse(
        gas_info=sdk_abci.GasInfo(gas_wanted=result.gas_wanted, gas_used=result.gas_used),
        result=sdk_abci.Result(data=result.data, log=result.log, events=result.events),
    )
