"""TEST ONLY: how a faulty executor answers (``ExecutorConfig.fault``), so a localnet can see PoC V2 catch a host
that cheats at inference. A real host never sets a fault: a dispute invalidates such answers and slashes the host.

``forge``: one answer in ``FORGE_EVERY`` (chosen by its inference id, so a test can tell which) carries a made-up
logprob list in place of the node's: every value moved down by ``FORGE_SHIFT`` nats. The answer's text and tokens
are the node's; the host relays, finishes and keeps the forged list, so its payload matches the chain's hashes and
only a re-execution finds it wrong."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

AnswerFault = Literal["forge"]
ANSWER_FAULTS: tuple[AnswerFault, ...] = ("forge",)
FORGE_EVERY = 2
FORGE_SHIFT = 0.5
"""Far outside any tolerance an implementation needs (mlnode/VERIFY.md: scale 0.05), never a near-tie."""


def forged(fault: AnswerFault | None, inference_id: bytes) -> bool:
    """Whether a host with ``fault`` forges the answer to ``inference_id``."""
    if fault != "forge":
        return False
    return int.from_bytes(hashlib.sha256(b"forge" + inference_id).digest()[:8], "big") % FORGE_EVERY == 0


def forge(choices: list[Any] | None) -> None:
    """Move every logprob of ``choices`` (an answer's ``message`` or a stream chunk's ``delta`` choices, as the
    node sent them: its own well-formed lists) down by ``FORGE_SHIFT``, in place."""
    for choice in choices or []:
        for entry in (choice.get("logprobs") or {}).get("content") or []:
            for item in (entry, *(entry.get("top_logprobs") or ())):
                item["logprob"] -= FORGE_SHIFT
