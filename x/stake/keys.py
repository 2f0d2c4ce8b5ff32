"""x/stake store layout, under the module prefix ``stake/``.

0x21 | operator(20)                  -> gonka.stake.v1.Host
0x22 | consensus_addr(20)            -> operator(20)
0x23 | ed25519_pubkey(32)            -> power (8 bytes, big-endian): the validator set last sent to CometBFT
0x24 | operator(20)                  -> power (8 bytes): the validator set in force (the power table)
0x25 | epoch(8) | operator(20)       -> weight (8 bytes): the epoch's weights (only the latest epoch's kept)
0x26 | completion_epoch(8) | operator(20) | creation_height(8) -> gonka.stake.v1.UnbondingEntry
0x51                                 -> gonka.stake.v1.Params
"""

from __future__ import annotations

MODULE_NAME = "stake"
STORE_PREFIX = b"stake/"
HOST_PREFIX = b"\x21"
CONSENSUS_INDEX_PREFIX = b"\x22"
LAST_POWER_PREFIX = b"\x23"
POWER_PREFIX = b"\x24"
WEIGHT_PREFIX = b"\x25"
UNBONDING_PREFIX = b"\x26"
PARAMS_KEY = b"\x51"

BONDED_POOL = "bonded_tokens_pool"
"""The module account that holds every host's bonded collateral."""
UNBONDING_POOL = "not_bonded_tokens_pool"
"""The module account that holds withdrawn collateral until it is paid (the Cosmos SDK's name)."""


def host_key(operator: bytes) -> bytes:
    return HOST_PREFIX + operator


def consensus_index_key(consensus_addr: bytes) -> bytes:
    return CONSENSUS_INDEX_PREFIX + consensus_addr


def last_power_key(ed25519_pubkey: bytes) -> bytes:
    return LAST_POWER_PREFIX + ed25519_pubkey


def power_key(operator: bytes) -> bytes:
    return POWER_PREFIX + operator


def weights_prefix(epoch: int) -> bytes:
    return WEIGHT_PREFIX + epoch.to_bytes(8, "big")


def weight_key(epoch: int, operator: bytes) -> bytes:
    return weights_prefix(epoch) + operator


def unbonding_key(completion_epoch: int, operator: bytes, creation_height: int) -> bytes:
    """One entry per host, completion epoch and block of withdrawal: a slash spares what was withdrawn
    before the offence, so entries of different heights stay apart."""
    return UNBONDING_PREFIX + completion_epoch.to_bytes(8, "big") + operator + creation_height.to_bytes(8, "big")


def unbonding_operator(key: bytes) -> bytes:
    """The operator of an unbonding entry's key."""
    return key[9:29]
