"""x/pool store layout, under the module prefix ``pool/``.

    0x01 | len(source) | source | denom -> paid into the pool from ``source`` (decimal text)
    0x02 | denom                        -> spent from the pool (decimal text)
    0x51                                -> gonka.pool.v1.Params

The pool's coins are the bank balance of the module account ``pool``.
"""

from __future__ import annotations

MODULE_NAME = "pool"
STORE_PREFIX = b"pool/"
INFLOW_PREFIX = b"\x01"
SPENT_PREFIX = b"\x02"
PARAMS_KEY = b"\x51"

POOL_ACCOUNT = "pool"
"""The module account that holds the community pool."""

SOURCE_FUND = "fund"
SOURCE_REWARDS = "rewards"
SOURCE_SLASH = "slash"
SOURCE_DEPOSIT = "deposit"
SOURCES = (SOURCE_FUND, SOURCE_REWARDS, SOURCE_SLASH, SOURCE_DEPOSIT)
"""Where the pool's coins come from: MsgFundCommunityPool, reward shares and rounding, slash remainders,
burned governance deposits."""


def source_prefix(source: str) -> bytes:
    raw = source.encode()
    return INFLOW_PREFIX + bytes([len(raw)]) + raw


def inflow_key(source: str, denom: str) -> bytes:
    return source_prefix(source) + denom.encode()


def spent_key(denom: str) -> bytes:
    return SPENT_PREFIX + denom.encode()
