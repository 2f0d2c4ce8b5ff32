"""What the executor proxy's tests (tests/test_executor.py, tests/test_host_poc.py) stand it on: a request as a
Transfer Agent forwards it (``forward``), and a finisher that records the finishes it is handed (``Recorder``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sdk.client.signing import request_headers
from sdk.crypto import bech32, secp256k1
from sdk.http.signed import forward_headers, signed_headers, verify_signed, with_seed
from x.inference.client import Finish


def forward(body: bytes, key: secp256k1.PrivateKey, ta: str, seed: int | None = None) -> tuple[dict[str, str], bytes]:
    """The headers and body the TA ``ta`` forwards for ``body`` signed by ``key`` for it (seed spliced in if
    given)."""
    signed = request_headers(key, body, ta)
    parsed = {name.lower().encode(): value.encode() for name, value in signed.items()}
    requester = verify_signed(*signed_headers(parsed), body, bech32.decode(ta))
    lines = forward_headers(requester, ta, seed).decode().strip().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return headers, body if seed is None else with_seed(body, seed)


@dataclass
class Recorder:
    """A finisher that keeps what it is handed."""

    finishes: list[Finish] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def submit(self, finish: Finish) -> bool:
        with self.changed:
            self.finishes.append(finish)
            self.changed.notify_all()
        return True

    def settled(self, count: int, timeout_s: float = 5.0) -> list[Finish]:
        """The finishes once there are ``count``: the executor hands an answer's finish over after the answer's
        last byte went out, so the client may have it a moment before the finish exists."""
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.finishes) >= count, timeout_s), self.finishes
            return list(self.finishes)

    def status(self) -> dict[str, Any]:
        return {"pending": len(self.finishes)}
