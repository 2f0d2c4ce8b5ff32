"""x/bank's registered errors (codespace ``bank``), numbered as the Cosmos SDK's ``x/bank/types/errors.go``."""

from __future__ import annotations

from sdk.errors import register

CODESPACE = "bank"
ErrSendDisabled = register(CODESPACE, 5, "send transactions are disabled")
