"""What x/bank needs from x/auth."""

from __future__ import annotations

from typing import Protocol

from sdk.context import Context


class AccountKeeper(Protocol):
    module_accounts: tuple[str, ...]

    def ensure_account(self, ctx: Context, address: bytes) -> None: ...
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...
    def has_permission(self, name: str, permission: str) -> bool: ...
