"""The node's gRPC server: every module query, cosmos.tx.v1beta1.Service, the tendermint Service and
server reflection, served from the ABCI server's event loop so queries never interleave with a block.
"""

from gonkad.grpcserver.server import GRPCServer, comet_rpc_address

__all__ = ["GRPCServer", "comet_rpc_address"]
