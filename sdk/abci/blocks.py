"""What consensus tells the modules about a block, and the byte formats of ABCI 2.0 module data.

``BlockInfo`` is the block as CometBFT hands it to FinalizeBlock (and, where the request has them, to
PrepareProposal, ProcessProposal and ExtendVote): height, time, hash, proposer, who signed the last block
and the evidence of misbehaviour. Everything in it is agreed by consensus, so hooks may depend on it.

Two formats let several modules share what CometBFT sees as one opaque value:

* **Vote extension** (one per validator and height): the modules' extensions as a list sorted by module
  name, each ``uvarint(len(name)) name uvarint(len(data)) data``; a module with nothing to add is left
  out, so an app whose modules add nothing extends its vote with ``b""``. Decoding is strict (names in
  strictly increasing order, no empty data, no trailing bytes), so one value has exactly one meaning.
* **Injected proposal entry** (a non-transaction entry at the head of a proposal):
  ``INJECTED_ENTRY_MAGIC uvarint(len(name)) name payload``. The magic starts with ``0x00``, a protobuf
  tag with field number 0, which no protobuf message (so no ``TxRaw``) can start with: an entry is never
  mistaken for a transaction, nor a transaction for an entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import validator_pb2

INJECTED_ENTRY_MAGIC = b"\x00gonka/inject\x00"
"""The head of every injected proposal entry; never the head of a valid ``TxRaw`` (see the module doc)."""
MAX_NAME_LENGTH = 64


@dataclass(frozen=True)
class VoteInfo:
    """One validator of the last block's set: its consensus address, power, and whether it signed."""

    validator: bytes
    power: int
    signed: bool


@dataclass(frozen=True)
class Misbehavior:
    """Evidence CometBFT committed in this block: ``kind`` is ``duplicate_vote`` or ``light_client_attack``."""

    kind: str
    validator: bytes
    power: int
    height: int
    time_ns: int
    total_voting_power: int


@dataclass(frozen=True)
class BlockInfo:
    """The whole block as consensus decided it, for begin/end block and the proposal hooks.

    ``hash`` is empty in PrepareProposal (the block does not exist yet); ``decided_last_commit`` is the
    last block's commit (in proposals, the commit the proposer saw). ``app_hash`` is the app hash in the
    block's header: the root of the state the block builds on (CometBFT's requests leave it out, but it is
    the app's own last answer, so the app fills it in; no field of the request can disagree with it).
    """

    height: int
    time_ns: int
    hash: bytes = b""
    proposer: bytes = b""
    decided_last_commit: tuple[VoteInfo, ...] = ()
    misbehavior: tuple[Misbehavior, ...] = ()
    app_hash: bytes = b""


@dataclass(frozen=True)
class VoteExtension:
    """One module's part of one validator's vote extension of the last height, as PrepareProposal sees it."""

    validator: bytes
    power: int
    data: bytes


def time_ns(timestamp: Any) -> int:
    return int(timestamp.seconds) * 1_000_000_000 + int(timestamp.nanos)


def block_info(
    req: abci.RequestFinalizeBlock | abci.RequestPrepareProposal | abci.RequestProcessProposal | abci.RequestExtendVote,
    app_hash: bytes = b"",
) -> BlockInfo:
    """A BlockInfo from any ABCI request that describes a block (their last-commit fields differ in name);
    ``app_hash``: the header's, which the caller knows (see BlockInfo)."""
    if isinstance(req, abci.RequestFinalizeBlock):
        commit: Any = req.decided_last_commit
    elif isinstance(req, abci.RequestPrepareProposal):
        commit = req.local_last_commit
    else:
        commit = req.proposed_last_commit
    return BlockInfo(
        height=req.height,
        time_ns=time_ns(req.time),
        hash=getattr(req, "hash", b""),
        proposer=req.proposer_address,
        decided_last_commit=tuple(
            VoteInfo(v.validator.address, v.validator.power, v.block_id_flag == validator_pb2.BLOCK_ID_FLAG_COMMIT)
            for v in commit.votes
        ),
        misbehavior=tuple(
            Misbehavior(
                kind=abci.MisbehaviorType.Name(m.type).lower(),
                validator=m.validator.address,
                power=m.validator.power,
                height=m.height,
                time_ns=time_ns(m.time),
                total_voting_power=m.total_voting_power,
            )
            for m in req.misbehavior
        ),
        app_hash=app_hash,
    )


# --- vote extensions ----------------------------------------------------------------------------------


def encode_vote_extension(parts: Mapping[str, bytes]) -> bytes:
    """The one vote extension of a validator from its modules' parts (empty parts left out)."""
    out = bytearray()
    for name in sorted(parts):
        if parts[name]:
            out += _field(name.encode()) + _field(parts[name])
    return bytes(out)


def decode_vote_extension(raw: bytes, modules: Iterable[str]) -> dict[str, bytes]:
    """The modules' parts of a vote extension; ValueError if it is not exactly what ``encode`` writes for
    the known ``modules``."""
    known = set(modules)
    parts: dict[str, bytes] = {}
    pos, last = 0, ""
    while pos < len(raw):
        name_raw, pos = _read_field(raw, pos)
        data, pos = _read_field(raw, pos)
        name = name_raw.decode("utf-8", errors="strict")
        if name not in known:
            raise ValueError(f"vote extension of unknown module {name!r}")
        if parts and name <= last:
            raise ValueError("vote extension modules out of order or repeated")
        if not data:
            raise ValueError(f"vote extension of module {name!r} is empty")
        parts[name], last = data, name
    return parts


# --- injected proposal entries ------------------------------------------------------------------------


def encode_injected_entry(module: str, payload: bytes) -> bytes:
    return INJECTED_ENTRY_MAGIC + _field(module.encode()) + payload


def is_injected_entry(raw: bytes) -> bool:
    return raw.startswith(INJECTED_ENTRY_MAGIC)


def decode_injected_entry(raw: bytes) -> tuple[str, bytes]:
    """(module name, payload) of an injected entry; ValueError if it is not one."""
    if not is_injected_entry(raw):
        raise ValueError("not an injected proposal entry")
    name, pos = _read_field(raw, len(INJECTED_ENTRY_MAGIC))
    if not name or len(name) > MAX_NAME_LENGTH:
        raise ValueError("injected entry has no valid module name")
    return name.decode("utf-8", errors="strict"), raw[pos:]


def proto_tx_size(tx: bytes) -> int:
    """What one tx adds to CometBFT's ``max_tx_bytes`` count (``Data.txs`` protobuf size: tag, length, bytes)."""
    return 1 + len(_uvarint(len(tx))) + len(tx)


def fit_txs(txs: Sequence[bytes], max_tx_bytes: int, used: int = 0) -> list[bytes]:
    """The longest prefix of ``txs`` (order kept) whose size, after ``used`` bytes, stays within
    ``max_tx_bytes``; CometBFT refuses a proposal over it."""
    kept: list[bytes] = []
    for tx in txs:
        used += proto_tx_size(tx)
        if used > max_tx_bytes:
            break
        kept.append(tx)
    return kept


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(data: bytes) -> bytes:
    return _uvarint(len(data)) + data


def _read_field(raw: bytes, pos: int) -> tuple[bytes, int]:
    """A length-prefixed field at ``pos`` (minimal uvarint, at most 4 bytes); ValueError if malformed."""
    length = shift = 0
    for i in range(4):
        if pos >= len(raw):
            raise ValueError("truncated length")
        byte = raw[pos]
        pos += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if byte == 0 and i > 0:
                raise ValueError("length not minimally encoded")
            break
    else:
        raise ValueError("length too long")
    if pos + length > len(raw):
        raise ValueError("truncated field")
    return raw[pos : pos + length], pos + length
