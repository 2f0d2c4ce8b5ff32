"""Everything the Transfer Agent needs from the chain, behind one protocol.

``ChainView`` is what the TA calls: the chain id and height, the model registry, the ML nodes registered for a
model (with their host's epoch weight), a requester's spendable balance, and the submission of
``MsgStartInference``. The TA never reaches the chain any other way, so a test can script the chain and the
real implementation (gRPC and CometBFT RPC, over ``x.inference.client``) can change without touching the TA.

Every method is synchronous. An implementation that does network I/O should be run with the agent's
``offload_chain_calls`` on, so that its calls leave the event loop for a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Model:
    id: str
    context_length: int
    price_per_token: int
    """ngonka per token: the least fee per token a request for this model may offer."""
    memory_bytes: int = 0
    """Memory a node needs to serve it (0: unknown, any node that lists the model will do)."""


@dataclass(frozen=True)
class Node:
    operator: str
    """The host's bech32 address: the executor named in ``MsgStartInference``."""
    node_id: str
    url: str
    models: tuple[str, ...]
    memory_bytes: int
    max_concurrency: int
    weight: int
    """The host's epoch weight: among equally loaded nodes the heavier host is chosen."""


@dataclass(frozen=True)
class StartRequest:
    """The fields of ``MsgStartInference``; the chain checks ``signature`` against the requester's key."""

    inference_id: bytes
    requester: str
    requester_pubkey: bytes
    signature: bytes
    body_hash: bytes
    timestamp_ns: int
    ta_address: str
    model: str
    max_tokens: int
    fee_per_token: int
    executor: str
    node_id: str
    seed: int
    params_hash: bytes
    reassign: bool = False
    """True when a node failed before answering and the same inference goes to another host's node: the same
    id with a new executor (the TA never sends a reassignment once a token has reached the client)."""


REASONS = ("insufficient_funds", "already_exists", "invalid")


@dataclass
class ChainError(Exception):
    """The chain refused a message: ``reason`` is one of ``REASONS``, ``message`` the chain's log."""

    reason: str
    message: str = ""
    details: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}" if self.message else self.reason


class ChainView(Protocol):
    def chain_id(self) -> str: ...

    def latest_height(self) -> int: ...

    def models(self) -> list[Model]: ...

    def nodes(self, model_id: str) -> list[Node]: ...

    def spendable(self, address: str, denom: str) -> int: ...

    def start_inference(self, request: StartRequest) -> None:
        """Submit ``MsgStartInference``; raise ``ChainError`` when the chain refuses it."""
        ...

    def tas(self) -> list[str]:
        """The URLs of the other Transfer Agents the chain knows."""
        ...
