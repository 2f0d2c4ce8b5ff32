"""Coins as integers: amounts are arbitrary-precision ints, never floats."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2

from sdk.errors import ErrInvalidCoins

# Every pattern ends in \Z, never $: Python's $ also matches before a final newline, so "ngonka\n" would
# pass for a denom with every caller's ``.match``.
DENOM_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9/:._-]{2,127}\Z")
COIN_RE = re.compile(r"^([0-9]+)([a-zA-Z][a-zA-Z0-9/:._-]{2,127})\Z")
MAX_AMOUNT = (1 << 256) - 1
"""Amounts are bounded as the Cosmos SDK bounds ``math.Int``: 256 bits."""
AMOUNT_RE = re.compile(rf"^[0-9]{{1,{len(str(MAX_AMOUNT))}}}\Z")
"""ASCII digits only: ``str.isdigit`` and ``int`` also take full-width, Arabic-Indic and superscript digits."""


def parse_amount(text: str, what: str = "amount") -> int:
    """A non-negative integer amount from its decimal text, exactly as the Cosmos SDK accepts it."""
    if not AMOUNT_RE.match(text):
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        raise ErrInvalidCoins.wrap(f"malformed {what} {shown!r}: expected at most {len(str(MAX_AMOUNT))} ASCII digits")
    amount = int(text)
    if amount > MAX_AMOUNT:
        raise ErrInvalidCoins.wrap(f"{what} {amount} exceeds 2^256 - 1")
    return amount


class Coins(tuple[tuple[str, int], ...]):
    """A sorted set of (denom, positive amount) pairs; the canonical form Cosmos uses."""

    def __str__(self) -> str:
        return _coins_text(self)

    def to_proto(self) -> list[coin_pb2.Coin]:
        return [coin_pb2.Coin(denom=d, amount=str(a)) for d, a in self]


@lru_cache(maxsize=4096)
def _coins_text(coins: Coins) -> str:
    """Cached: events print every fee and amount, and they repeat."""
    return ",".join(f"{amount}{denom}" for denom, amount in coins)


def make_coins(pairs: list[tuple[str, int]]) -> Coins:
    """Validate denoms and amounts; reject duplicates, zero or negative amounts."""
    seen: set[str] = set()
    for denom, amount in pairs:
        if not DENOM_RE.match(denom):
            raise ErrInvalidCoins.wrap(f"invalid denom {denom!r}")
        if denom in seen:
            raise ErrInvalidCoins.wrap(f"duplicate denom {denom!r}")
        if not 0 < amount <= MAX_AMOUNT:
            raise ErrInvalidCoins.wrap(f"amount {amount} of {denom} must be positive")
        seen.add(denom)
    return Coins(sorted(pairs))


def coins_from_proto(coins: Iterable[coin_pb2.Coin]) -> Coins:
    return _coins_from_text(tuple((coin.denom, coin.amount) for coin in coins))


@lru_cache(maxsize=4096)
def _coins_from_text(pairs: tuple[tuple[str, str], ...]) -> Coins:
    """Cached: every tx's fee and most sends' amounts are one of a few texts, and the answer (or the error
    raised, which is never cached) depends on the text alone."""
    return make_coins([(denom, parse_amount(amount)) for denom, amount in pairs])


def parse_coins(text: str) -> Coins:
    """Parse ``100ngonka,5uatom`` as the Cosmos CLI does."""
    pairs = []
    for part in text.split(","):
        m = COIN_RE.match(part.strip())
        if not m:
            raise ErrInvalidCoins.wrap(f"malformed amount {part!r}; expected e.g. 1000ngonka")
        pairs.append((m.group(2), parse_amount(m.group(1))))
    return make_coins(pairs)


DEC_COIN_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([a-zA-Z][a-zA-Z0-9/:._-]{2,127})\Z")


def parse_dec_coins(text: str) -> tuple[tuple[str, Fraction], ...]:
    """Parse prices like ``0.001ngonka`` exactly (as fractions, never floats); empty text is no price."""
    prices = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = DEC_COIN_RE.match(part)
        if not m:
            raise ValueError(f"malformed price {part!r}; expected e.g. 0.001ngonka")
        prices.append((m.group(2), Fraction(m.group(1))))
    return tuple(sorted(prices))


DEC_PRECISION = 18
"""Decimal places of the Cosmos SDK's ``LegacyDec``, which it always prints in full."""


def format_dec_coins(prices: tuple[tuple[str, Fraction], ...]) -> str:
    """Prices as the Cosmos SDK prints ``DecCoins`` (node Config's ``minimum_gas_price``), so clients that
    parse its form read ours: zero prices left out, 18 decimals, comma-separated, e.g.
    ``0.025000000000000000ngonka``; no price at all is the empty string."""
    scale = 10**DEC_PRECISION
    parts = []
    for denom, price in sorted(prices):
        if price:
            units = math.floor(price * scale)
            parts.append(f"{units // scale}.{units % scale:0{DEC_PRECISION}d}{denom}")
    return ",".join(parts)


@lru_cache(maxsize=1024)
def required_fees(prices: tuple[tuple[str, Fraction], ...], gas_limit: int) -> Coins:
    """Fee each denom must reach: ceil(price * gas_limit). Cached: CheckTx asks it of every tx, with this
    node's prices and the few gas limits wallets use."""
    return make_coins([(d, math.ceil(p * gas_limit)) for d, p in prices if p * gas_limit > 0])
