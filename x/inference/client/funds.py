"""``Funds``: what a requester can spend on escrows, as a TA or a host admitting paid requests sees it, without a
chain read per request.

A balance is read once per committed height: it stands for the height the application had committed when it was
read (``height``), and the first request after the chain commits a new one reads it again. CheckTx does not run
the escrow, so a start sent is not in that balance until its block: the escrow of every start let through here
is held (``reserve``) until a balance read ``pending_blocks`` heights after the one it was sent at, by which time
its block took the escrow from the balance itself (a start sent at height h is in block h + 1, or h + 2 when it
reached the mempool as h + 1 was being made). Until then it is counted here, and for a moment after it may count
twice: this refuses a request early, never lets through more than the requester can pay. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class _Account:
    height: int
    balance: int
    held: deque[tuple[int, int]] = field(default_factory=deque)
    """(height when held, escrow) of the starts let through that may not be in ``balance`` yet."""

    def holding(self, pending_blocks: int) -> int:
        while self.held and self.held[0][0] + pending_blocks <= self.height:
            self.held.popleft()
        return sum(escrow for _, escrow in self.held)


class Funds:
    """``read(address, denom)``: the chain's spendable balance now; ``height()``: the application's committed
    height (cheap: a cached poll)."""

    def __init__(self, read: Callable[[str, str], int], height: Callable[[], int], pending_blocks: int = 2) -> None:
        self.read, self.height, self.pending_blocks = read, height, pending_blocks
        self.lock = threading.Lock()
        self.accounts: dict[tuple[str, str], _Account] = {}
        self.swept = 0

    def _with(self, address: str, denom: str, apply: Callable[[_Account], T]) -> T:
        """``apply`` (under the lock) to the account's entry at the committed height, read from the chain first
        when the entry is of an older one."""
        key, height = (address, denom), self.height()
        with self.lock:
            account = self.accounts.get(key)
            if account is not None and account.height >= height:
                return apply(account)
        balance = self.read(address, denom)  # at ``height`` or later: more of the held escrows already taken
        with self.lock:
            account = self.accounts.get(key)
            if account is None:
                account = self.accounts[key] = _Account(height, balance)
            elif account.height < height:
                account.height, account.balance = height, balance
            if height > self.swept:
                self._sweep(height)
            return apply(account)

    def _sweep(self, height: int) -> None:
        """Forget the accounts that hold nothing and were read before ``height`` (they are read again anyway)."""
        self.swept = height
        for key in [k for k, a in self.accounts.items() if a.height < height and not a.holding(self.pending_blocks)]:
            del self.accounts[key]

    def spendable(self, address: str, denom: str) -> int:
        """The balance less the escrows held against it."""
        return self._with(address, denom, lambda account: account.balance - account.holding(self.pending_blocks))

    def reserve(self, address: str, denom: str, escrow: int) -> tuple[int, int] | None:
        """Hold ``escrow`` when the balance covers it and what is held already: None; else (balance, held), and
        nothing is held."""

        def hold(account: _Account) -> tuple[int, int] | None:
            held = account.holding(self.pending_blocks)
            if account.balance < held + escrow:
                return account.balance, held
            account.held.append((account.height, escrow))
            return None

        return self._with(address, denom, hold)

    def release(self, address: str, denom: str, escrow: int) -> None:
        """Give back an escrow held for a start that did not go out."""
        with self.lock:
            account = self.accounts.get((address, denom))
            if account is None:
                return
            for entry in account.held:
                if entry[1] == escrow:
                    account.held.remove(entry)
                    return
