"""The data the client library speaks in: what the Transfer Agent's ``agent.chain.ChainView`` sees of the chain
(``Model``, ``Node``, ``StartRequest``, ``ChainError``) and what the executing host finishes (``Finish``). Plain
values, so the TA and the executor proxy never touch protobuf."""

from __future__ import annotations

from dataclasses import dataclass, field

from sdk.errors import ErrInsufficientFunds
from x.inference.errors import ErrDuplicate


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
    release: bytes = b""
    """For a reassignment: the failed executor's key (33 bytes) ‖ its release signature (64), from its
    ``X-Release`` header; b"" when it gave none (the chain then waits for the executor window)."""


@dataclass(frozen=True)
class Finish:
    """The fields of ``MsgFinishInference`` the executor derives from its node's answer (``host/digest.py``)."""

    inference_id: bytes
    response_hash: bytes
    prompt_tokens: int
    completion_tokens: int
    logprobs_digest: bytes


REFUSALS = ("insufficient_funds", "already_exists", "invalid")
REASONS = {
    (ErrInsufficientFunds.codespace, ErrInsufficientFunds.code): "insufficient_funds",
    (ErrDuplicate.codespace, ErrDuplicate.code): "already_exists",
}
"""The CheckTx refusals with a reason of their own; any other is ``invalid``."""


@dataclass
class ChainError(Exception):
    """The chain refused a message: ``reason`` is one of ``REFUSALS``, ``message`` the chain's log."""

    reason: str
    message: str = ""
    details: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}" if self.message else self.reason


def refusal(codespace: str, code: int, log: str) -> ChainError:
    """A CheckTx refusal as ``ChainError`` (``REASONS``, else ``invalid``; ``details`` has its codespace and code):
    what a ``TxSigner`` of the TA or the host raises (its ``refused``)."""
    return ChainError(REASONS.get((codespace, code), "invalid"), log, {"codespace": codespace, "code": str(code)})
