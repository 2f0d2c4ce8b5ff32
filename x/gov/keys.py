"""x/gov store layout, under the module prefix ``gov/``.

    0x00 | id(8)                     -> cosmos.gov.v1.Proposal
    0x01 | deposit_end(8) | id(8)    -> b"" : the deposit-period queue (proposals waiting for min deposit)
    0x02 | voting_end(8) | id(8)     -> b"" : the voting-period queue (proposals to tally)
    0x03                             -> next proposal id (8 bytes, big-endian)
    0x10 | id(8) | depositor(20)     -> cosmos.gov.v1.Deposit
    0x20 | id(8) | voter(20)         -> cosmos.gov.v1.Vote
    0x30                             -> cosmos.gov.v1.Params

Deposits are held by the module account ``gov_deposits`` (``DEPOSITS_ACCOUNT``), apart from the authority's.
Times are block times in nanoseconds (big-endian, so the queues iterate in time order). Every integer is
big-endian, so ids iterate in order.
"""

from __future__ import annotations

MODULE_NAME = "gov"
"""Also the authority's module account: a passed proposal's messages run as it, so it holds no deposits."""
DEPOSITS_ACCOUNT = "gov_deposits"
"""The module account that holds proposal deposits: no message signs for it and no MsgSend pays it, so only
gov's settlement (refund, burn, to the community pool) moves its coins."""
STORE_PREFIX = b"gov/"
PROPOSAL_PREFIX = b"\x00"
INACTIVE_QUEUE_PREFIX = b"\x01"
ACTIVE_QUEUE_PREFIX = b"\x02"
NEXT_PROPOSAL_ID_KEY = b"\x03"
DEPOSIT_PREFIX = b"\x10"
VOTE_PREFIX = b"\x20"
PARAMS_KEY = b"\x30"


def u64(value: int) -> bytes:
    return value.to_bytes(8, "big")


def proposal_key(proposal_id: int) -> bytes:
    return PROPOSAL_PREFIX + u64(proposal_id)


def queue_key(prefix: bytes, end_ns: int, proposal_id: int) -> bytes:
    return prefix + u64(max(end_ns, 0)) + u64(proposal_id)


def deposits_prefix(proposal_id: int) -> bytes:
    return DEPOSIT_PREFIX + u64(proposal_id)


def deposit_key(proposal_id: int, depositor: bytes) -> bytes:
    return deposits_prefix(proposal_id) + depositor


def votes_prefix(proposal_id: int) -> bytes:
    return VOTE_PREFIX + u64(proposal_id)


def vote_key(proposal_id: int, voter: bytes) -> bytes:
    return votes_prefix(proposal_id) + voter
