"""x/rewards store layout, under the module prefix ``rewards/``.

0x01                              -> total minted so far, in mint_denom (decimal text)
0x02 | epoch(8) | host(20)        -> work units the host did in the epoch (decimal text); deleted once paid
0x03 | host(20) | denom           -> everything the host was rewarded in denom (decimal text)
0x51                              -> gonka.rewards.v1.Params
"""

from __future__ import annotations

MODULE_NAME = "rewards"
STORE_PREFIX = b"rewards/"
MINTED_KEY = b"\x01"
WORK_PREFIX = b"\x02"
HOST_TOTAL_PREFIX = b"\x03"
PARAMS_KEY = b"\x51"

REWARDS_ACCOUNT = "rewards"
"""The module account issuance is minted into (permission ``minter``) and each epoch's rewards pass through."""
POOL_SOURCE = "rewards"
"""The source the community pool counts reward shares and rounding under."""


def work_prefix(epoch: int) -> bytes:
    return WORK_PREFIX + epoch.to_bytes(8, "big")


def work_key(epoch: int, host: bytes) -> bytes:
    return work_prefix(epoch) + host


def host_total_prefix(host: bytes) -> bytes:
    return HOST_TOTAL_PREFIX + host


def host_total_key(host: bytes, denom: str) -> bytes:
    return host_total_prefix(host) + denom.encode()
