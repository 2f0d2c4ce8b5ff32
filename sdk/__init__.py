"""The framework Gonka's chain is built on, in the Cosmos SDK's shape: BaseApp and its ABCI server, the
Merkle store, transactions, errors, gas, the module interface, the node's servers (``server``), the
client library (``client``) and the CLI helpers module commands share (``cli``). The module interface
(block hooks with ``BlockInfo``, vote extensions, injected proposal entries, node-local config) is
described in ``sdk/README.md``.

It imports nothing of the app: not ``x/``, ``app.py``, ``gonkad/``, ``mlnode/`` or ``diloco/``
(tests/test_layout.py holds it to that).
"""
