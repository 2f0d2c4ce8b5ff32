"""Block certificates: one BLS aggregate signature, by validators holding more than 2/3 of the power, over a
height's signing message. The format x/bls puts in blocks, and what any client checks outside the chain.

    message   = sha256(DOMAIN ‖ u16(len(chain_id)) ‖ chain_id ‖ u64(height) ‖ u16(len(commitment)) ‖ commitment)
    signers   = bitmap over the height's validators in CometBFT's order: bit i is byte i // 8, bit i % 8 (least
                significant first); exactly ceil(n / 8) bytes, the bits past n zero
    signature = Aggregate(share_i for each signer i), each share = Sign(sk_i, message), 96 bytes
    valid     = 3 · (power of signers) > 2 · (power of all n validators), every signer has a key, and
                FastAggregateVerify(signers' keys, message, signature)
    beacon    = sha256(BEACON_DOMAIN ‖ signature)

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
MAX_CHAIN_ID = 0xFFFF

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


def signing_message(chain_id: str, height: int, commitment: bytes) -> bytes:
    """The 32-byte digest every validator signs for ``height`` (see the module doc)."""
    cid = chain_id.encode()
    if len(cid) > MAX_CHAIN_ID or len(commitment) > 0xFFFF or not 0 <= height < 1 << 64:
        raise ValueError("chain id, height or commitment out of range")
    return hashlib.sha256(
        DOMAIN
        + len(cid).to_bytes(2, "big")
        + cid
        + height.to_bytes(8, "big")
        + len(commitment).to_bytes(2, "big")
        + commitment
    ).digest()


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
