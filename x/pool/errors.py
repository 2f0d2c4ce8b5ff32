"""x/pool's error codes (codespace ``pool``)."""

from __future__ import annotations

from sdk.errors import register

ErrBadSource = register("pool", 2, "invalid inflow source")
