"""What x/bank needs from x/auth."""

from __future__ import annotations

from typing import Protocol

from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_account(self, ctx: Context, address: bytes) -> None: ...
