"""x/stake's error codes (codespace ``stake``)."""

from __future__ import annotations

from sdk.errors import register

ErrHostExists = register("stake", 2, "host already registered")
ErrConsensusKeyUsed = register("stake", 3, "consensus key already used by another host")
ErrNoHost = register("stake", 4, "no host")
ErrInsufficientCollateral = register("stake", 5, "insufficient collateral")
ErrBadDenom = register("stake", 6, "invalid collateral denom")
