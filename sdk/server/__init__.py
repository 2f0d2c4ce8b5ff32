"""What a node serves besides ABCI: gRPC (``grpc``) and the worker threads queries run on (``workers``)."""
