"""The node's REST API: the Cosmos SDK's gRPC-gateway routes (``GET /cosmos/bank/v1beta1/balances/{address}``,
``POST /cosmos/tx/v1beta1/txs``, ``/gonka/<module>/v1/…``) derived from the served services' ``google.api.http``
options and answered in process by the gRPC server's handlers, in the SDK's proto3 JSON."""

from sdk.rest.server import RESTServer

__all__ = ["RESTServer"]
