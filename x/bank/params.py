"""x/bank params: ``send_enabled`` (per denom) and ``default_send_enabled``, changed by ``MsgUpdateParams``."""

from __future__ import annotations

from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2

from sdk.coins import DENOM_RE


def validate_params(params: bank_pb2.Params) -> None:
    """Each per-denom ``send_enabled`` entry names a valid denom, once."""
    seen: set[str] = set()
    for entry in params.send_enabled:
        if not DENOM_RE.match(entry.denom):
            raise ValueError(f"send_enabled denom {entry.denom!r} is invalid")
        if entry.denom in seen:
            raise ValueError(f"send_enabled lists denom {entry.denom!r} twice")
        seen.add(entry.denom)
