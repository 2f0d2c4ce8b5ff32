"""Everything the Transfer Agent needs from the chain, behind one protocol.

``ChainView`` is what the TA calls: the chain id and height, the model registry, the ML nodes registered for a
model (with their host's epoch weight), a requester's spendable balance, and the submission of
``MsgStartInference``; its data types (``Model``, ``Node``, ``StartRequest``, ``ChainError``) are the chain's, from
the client library (``x.inference.client``). The TA never reaches the chain any other way, so a test can script
the chain and the real implementation (``agent.view.ChainInferenceView``: gRPC and CometBFT RPC) can change
without touching the TA.

Every method is synchronous. An implementation that does network I/O should be run with the agent's
``offload_chain_calls`` on, so that its calls leave the event loop for a worker thread.
"""

from __future__ import annotations

from typing import Protocol

from x.inference.client import ChainError, Model, Node, StartRequest

__all__ = ["ChainError", "ChainView", "Model", "Node", "StartRequest"]


class ChainView(Protocol):
    def chain_id(self) -> str: ...

    def latest_height(self) -> int: ...

    def models(self) -> list[Model]: ...

    def nodes(self, model_id: str) -> list[Node]: ...

    def spendable(self, address: str, denom: str) -> int: ...

    def start_inference(self, request: StartRequest) -> bytes:
        """Submit ``MsgStartInference`` (or the reassignment); the signed transaction the chain took, which the TA
        forwards to the executor (b"" when there is none to show, as in a scripted chain); raise ``ChainError``
        when the chain refuses it."""
        ...

    def executor_of(self, inference_id: bytes) -> str | None:
        """The executor (host address) of the inference when the chain has it STARTED or FINISHED, else None: the
        host that answers the same signed request again (a client failing over from another TA)."""
        ...

    def tas(self) -> list[str]:
        """The URLs of the other Transfer Agents the chain knows."""
        ...
