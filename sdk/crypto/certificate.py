"""Block certificates: one BLS aggregate signature, by validators holding more than 2/3 of the power, over a
height's signing message. The format x/bls puts in blocks, and what any client checks outside the chain.

    message   = sha256(DOMAIN ‖ u16(len(chain_id)) ‖ chain_id ‖ u64(height) ‖ u16(len(commitment)) ‖ commitment)
    signers   = bitmap over the height's validators in CometBFT's order: bit i is byte i // 8, bit i % 8 (least
                significant first); exactly ceil(n / 8) bytes, the bits past n zero
    signature = Aggregate(share_i for each signer i), each share = Sign(sk_i, message), 96 bytes
    valid     = 3 · (power of signers) > 2 · (power of all n validators), every signer has a key, and
                FastAggregateVerify(signers' keys, message, signature)
    beacon    = sha256(BEACON_DOMAIN ‖ signature)

A height may also sign **extras** (named 32-byte digests some module asks the votes to sign: an epoch's summary,
the incoming validator set). Their digest joins the message under its own domain, so a height without extras
signs exactly the message above:

    extras    = sha256(EXTRAS_DOMAIN ‖ for each (name, digest) in name order: u16(len(name)) ‖ name ‖ digest)
    message   = sha256(EXTRA_DOMAIN ‖ u16(len(chain_id)) ‖ chain_id ‖ u64(height) ‖ u16(len(commitment)) ‖
                       commitment ‖ extras)
    set hash  = sha256(SET_DOMAIN ‖ u64(effective height) ‖ previous hash(32) ‖ u32(n) ‖
                       for each validator in operator order: operator(20) ‖ u16(len(key)) ‖ key ‖ u64(power))

Integers are big-endian (u16: 2 bytes, u64: 8). The keys have proofs of possession (checked when they were
registered), which is what makes FastAggregateVerify over one message safe against rogue keys.

The beacon is unpredictable and cannot be forged: BLS signatures are unique, so a given signer set's
aggregate over a given message is one value, which nobody can compute before more than 2/3 of the power
has signed, and which nobody can replace by one of their choosing. Whoever assembles a certificate can
withhold it (x/bls then rejects the block once certificates are required) or leave out signers; leaving
out signers is the freedom CometBFT's proposer already has over which precommits its block's last commit
lists, bounded the same way (the rest must still hold > 2/3). An honest proposer aggregates every valid
share it received.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sdk.crypto import bls

DOMAIN = b"gonka/bls/v1/block"
BEACON_DOMAIN = b"gonka/bls/v1/beacon"
EXTRA_DOMAIN = b"gonka/bls/v1/block+extras"
EXTRAS_DOMAIN = b"gonka/bls/v1/extras"
SET_DOMAIN = b"gonka/bls/v1/validator-set"
MAX_CHAIN_ID = 0xFFFF
DIGEST_SIZE = 32

FastAggregateVerify = Callable[[Sequence[bytes], bytes, bytes], bool]
"""(public keys, message, signature) -> valid: ``bls.fast_aggregate_verify``, or a reference such as py_ecc's
``G2ProofOfPossession.FastAggregateVerify``."""


class CertificateError(ValueError):
    """Why a certificate is not valid."""


@dataclass(frozen=True)
class Validator:
    """One validator of the certified height's set: its BLS key (b"" if it had none) and voting power."""

    public_key: bytes
    power: int


def signing_message(chain_id: str, height: int, commitment: bytes, extras: bytes = b"") -> bytes:
    """The 32-byte digest every validator signs for ``height`` (see the module doc); ``extras``: the digest of
    the height's extras (``extras_digest``), b"" for a height without."""
    cid = chain_id.encode()
    if len(cid) > MAX_CHAIN_ID or len(commitment) > 0xFFFF or not 0 <= height < 1 << 64:
        raise ValueError("chain id, height or commitment out of range")
    if extras and len(extras) != DIGEST_SIZE:
        raise ValueError(f"extras digest of {len(extras)} bytes, not {DIGEST_SIZE}")
    return hashlib.sha256(
        (EXTRA_DOMAIN if extras else DOMAIN)
        + len(cid).to_bytes(2, "big")
        + cid
        + height.to_bytes(8, "big")
        + len(commitment).to_bytes(2, "big")
        + commitment
        + extras
    ).digest()


def extras_digest(extras: Sequence[tuple[str, bytes]]) -> bytes:
    """The digest of a height's extras, (name, 32-byte digest) pairs; b"" when there are none."""
    if not extras:
        return b""
    names = [name for name, _ in extras]
    if names != sorted(set(names)):
        raise ValueError("extras must be in name order, each name once")
    body = bytearray(EXTRAS_DOMAIN)
    for name, digest in extras:
        if len(digest) != DIGEST_SIZE:
            raise ValueError(f"extra {name!r} of {len(digest)} bytes, not {DIGEST_SIZE}")
        encoded = name.encode()
        body += len(encoded).to_bytes(2, "big") + encoded + digest
    return hashlib.sha256(body).digest()


@dataclass(frozen=True)
class HandedOff:
    """One validator of a handed-off set: operator (20 bytes), BLS key (b"" if none), power."""

    operator: bytes
    public_key: bytes
    power: int


def validator_set_hash(effective_height: int, previous_hash: bytes, validators: Sequence[HandedOff]) -> bytes:
    """The hash an outgoing set signs for the set in force from ``effective_height`` (validators in operator
    order; ``previous_hash``: the handoff before it, 32 zero bytes for the genesis set)."""
    operators = [v.operator for v in validators]
    if operators != sorted(set(operators)) or any(len(op) != 20 for op in operators):
        raise ValueError("validators must be 20-byte operators in ascending order, each once")
    body = bytearray(
        SET_DOMAIN + effective_height.to_bytes(8, "big") + previous_hash + len(validators).to_bytes(4, "big")
    )
    for v in validators:
        body += v.operator + len(v.public_key).to_bytes(2, "big") + v.public_key + v.power.to_bytes(8, "big")
    return hashlib.sha256(body).digest()


def encode_signers(flags: Sequence[bool]) -> bytes:
    out = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            out[i // 8] |= 1 << (i % 8)
    return bytes(out)


def decode_signers(bitmap: bytes, count: int) -> list[bool]:
    """The flags of ``count`` validators; CertificateError if the bitmap's length or padding is wrong."""
    if len(bitmap) != (count + 7) // 8:
        raise CertificateError(f"signer bitmap of {len(bitmap)} bytes for {count} validators")
    flags = [bool(bitmap[i // 8] >> (i % 8) & 1) for i in range(len(bitmap) * 8)]
    if any(flags[count:]):
        raise CertificateError("signer bitmap has bits set past the last validator")
    return flags[:count]


def exceeds_two_thirds(signed: int, total: int) -> bool:
    return 3 * signed > 2 * total


def beacon(signature: bytes) -> bytes:
    return hashlib.sha256(BEACON_DOMAIN + signature).digest()


def signer_keys(validators: Sequence[Validator], bitmap: bytes) -> list[bytes]:
    """The signers' keys, in set order, once the bitmap is well formed, every signer has a key and the signers
    hold more than 2/3 of the power; else CertificateError."""
    flags = decode_signers(bitmap, len(validators))
    signers = [v for v, flag in zip(validators, flags) if flag]
    if not signers:
        raise CertificateError("no signers")
    if any(not v.public_key for v in signers):
        raise CertificateError("a signer has no BLS key")
    signed, total = sum(v.power for v in signers), sum(v.power for v in validators)
    if not exceeds_two_thirds(signed, total):
        raise CertificateError(f"signers hold {signed} of {total} power, not more than 2/3")
    return [v.public_key for v in signers]


def verify(
    message: bytes,
    bitmap: bytes,
    signature: bytes,
    validators: Sequence[Validator],
    fast_aggregate_verify: FastAggregateVerify = bls.fast_aggregate_verify,
) -> None:
    """Raise CertificateError unless the certificate is valid for ``message`` and ``validators`` (in order)."""
    keys = signer_keys(validators, bitmap)
    if len(signature) != bls.SIGNATURE_SIZE:
        raise CertificateError(f"signature of {len(signature)} bytes, not {bls.SIGNATURE_SIZE}")
    if not fast_aggregate_verify(keys, message, signature):
        raise CertificateError("the aggregate signature does not verify for the signers' keys")
