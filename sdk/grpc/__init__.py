"""The node's gRPC server: every query route (the modules' and BaseApp's own: consensus params, node
config), cosmos.tx.v1beta1.Service, the tendermint Service and server reflection, served from the ABCI
server's event loop; module queries and simulations run on the node's query workers over a snapshot of
the committed state, so they never see half a block and never hold up consensus.
"""

from sdk.grpc.server import GRPCServer

__all__ = ["GRPCServer"]
