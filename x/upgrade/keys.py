"""x/upgrade store layout, under the module prefix ``upgrade/``.

    0x00          -> the scheduled plan (cosmos.upgrade.v1beta1.Plan); absent: none
    0x01 | name   -> the height the plan ``name`` was applied at (8 bytes, big-endian)
    0x02 | module -> the consensus version ``module``'s state is at (8 bytes, big-endian)

The Cosmos SDK keeps the same three under the same bytes.
"""

from __future__ import annotations

MODULE_NAME = "upgrade"
STORE_PREFIX = b"upgrade/"
PLAN_KEY = b"\x00"
DONE_PREFIX = b"\x01"
VERSION_PREFIX = b"\x02"
UPGRADE_INFO_FILE = "upgrade-info.json"
"""Written into the node's ``data/`` at a plan's height when this binary cannot apply it; Cosmovisor watches it."""


def done_key(name: str) -> bytes:
    return DONE_PREFIX + name.encode()


def version_key(module: str) -> bytes:
    return VERSION_PREFIX + module.encode()


def encode_uint(value: int) -> bytes:
    return value.to_bytes(8, "big")


def decode_uint(raw: bytes) -> int:
    return int.from_bytes(raw, "big")
