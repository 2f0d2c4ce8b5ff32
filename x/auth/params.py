"""x/auth params: signature and memo limits and gas costs, changed by ``MsgUpdateParams``."""

from __future__ import annotations

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2


def validate_params(params: auth_pb2.Params) -> None:
    """Gas prices of zero would make spam free; a signature limit of zero would forbid every tx."""
    for field in ("tx_sig_limit", "tx_size_cost_per_byte", "sig_verify_cost_secp256k1", "max_memo_characters"):
        if getattr(params, field) == 0:
            raise ValueError(f"auth param {field} must be positive")
