"""Proven reads: a key's value (or its absence) at a height, checked with the ics23 verifier against the
app hash of the header that commits to that height's state.

The state after block H is committed by the ``app_hash`` of header H+1. Here the header comes from the node
asked; a light client would take it from its own verified headers and call ``verify_proof_ops`` alone.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from sdk.client.rpc import CometRPC, RPCError
from sdk.store.proof import PROOF_OP_TYPE, verify_membership, verify_nonmembership


class ProofError(ValueError):
    """The answer's proof is missing, of another kind, or does not verify against the app hash."""


def verify_proof_ops(ops: list[dict[str, Any]], key: bytes, value: bytes | None, app_hash: bytes) -> None:
    """Check a query answer's ``proofOps`` (CometBFT JSON: base64 ``key``/``data``) for ``key`` -> ``value``
    (None: absent) against ``app_hash``; raise ProofError unless it holds."""
    if len(ops) != 1:
        raise ProofError(f"expected one proof op, got {len(ops)}")
    op = ops[0]
    if op.get("type") != PROOF_OP_TYPE:
        raise ProofError(f"proof op of type {op.get('type')!r}, expected {PROOF_OP_TYPE!r}")
    if base64.b64decode(op.get("key") or "") != key:
        raise ProofError("the proof is for another key")
    proof = base64.b64decode(op.get("data") or "")
    ok = verify_nonmembership(app_hash, key, proof) if value is None else verify_membership(app_hash, key, value, proof)
    if not ok:
        what = "absence" if value is None else "value"
        raise ProofError(f"the proof of the key's {what} does not verify against app hash {app_hash.hex()}")


def header_app_hash(rpc: CometRPC, height: int, wait_s: float = 10.0) -> bytes:
    """The ``app_hash`` of header ``height`` (waiting up to ``wait_s`` for that block)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return bytes.fromhex(rpc.block(height)["block"]["header"]["app_hash"])
        except RPCError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def proven_get(rpc: CometRPC, key: bytes, height: int) -> bytes | None:
    """The value of store ``key`` after block ``height`` (None if absent), proven against header height+1."""
    answer = rpc.abci_query("/store/key", key, height=height, prove=True)
    if answer.get("code"):
        raise ProofError(f"query failed: {answer.get('log')}")
    if int(answer.get("height", 0)) != height:
        raise ProofError(f"answered at height {answer.get('height')}, asked {height}")
    value = answer["value"] or None
    ops = (answer.get("proofOps") or {}).get("ops") or []
    verify_proof_ops(ops, key, value, header_app_hash(rpc, height + 1))
    return value
