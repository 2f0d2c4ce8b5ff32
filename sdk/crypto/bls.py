"""BLS12-381 signatures as the framework uses them: bytes in, bytes out, on blspy (blst).

Ciphersuite ``BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_`` (IETF draft-irtf-cfrg-bls-signature,
proof-of-possession scheme, "minimal-pubkey-size" variant, the one Ethereum consensus uses):

* secret keys: 32-byte big-endian integers in ``[1, r)``;
* public keys: compressed G1 points, 48 bytes;
* signatures and proofs of possession: compressed G2 points, 96 bytes; proofs use the separate DST
  ``BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_``, so a proof is never a signature over the key bytes.

blspy's ``PopSchemeMPL`` produces the same bytes as the reference (py_ecc ``G2ProofOfPossession``),
and its checked parsers already refuse malformed encodings and points outside the prime-order
subgroups. What it lacks, and is added here:

* the identity (point at infinity) public key is accepted by blspy, and ``fast_aggregate_verify``
  with it in the list can return True; the standard's KeyValidate refuses it, and so do we - an
  identity key signs nothing, and letting it in breaks the accounting of who signed an aggregate;
* ``Aggregate([])`` returns the infinity signature and a zero secret key signs with it; both are
  refused (an empty aggregate proves nothing);
* blspy's ``key_gen`` is the older draft KeyGen (salt not re-hashed); ``keygen`` here is the
  current IETF / EIP-2333 one, so keys derived from a seed match other implementations;
* parse failures surface as ``ValueError``/``RuntimeError`` from C++; here the verifiers return
  False on any bad input and everything else raises ``BlsError``;
* blspy has no scalar multiplication, so ``batch_verify`` (many signers, one message, each signature checked
  for its own key) builds its random linear combination from point additions.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from functools import lru_cache

from blspy import G1Element, G2Element, PopSchemeMPL, PrivateKey

SECRET_KEY_SIZE = 32
PUBLIC_KEY_SIZE = 48
SIGNATURE_SIZE = 96
# order r of the G1/G2 subgroups (and the scalar field)
CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001

_KEYGEN_SALT = b"BLS-SIG-KEYGEN-SALT-"
_KEYGEN_L = 48  # ceil(3 * ceil(log2(r)) / 16)
_BYTES = (bytes, bytearray, memoryview)


class BlsError(ValueError):
    """A key, signature or argument that BLS refuses."""


def keygen(seed: bytes, *, key_info: bytes = b"") -> bytes:
    """KeyGen of the IETF draft (v4+) / EIP-2333: HKDF-mod-r of ``seed``, re-hashing the salt until nonzero."""
    if not isinstance(seed, _BYTES) or len(seed) < 32:
        raise BlsError("keygen needs a seed of at least 32 bytes")
    ikm = bytes(seed) + b"\x00"  # IKM || I2OSP(0, 1)
    info = bytes(key_info) + _KEYGEN_L.to_bytes(2, "big")
    salt = _KEYGEN_SALT
    secret = 0
    while secret == 0:
        salt = hashlib.sha256(salt).digest()
        prk = hmac.new(salt, ikm, hashlib.sha256).digest()
        okm, block, counter = b"", b"", 1
        while len(okm) < _KEYGEN_L:
            block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
            okm += block
            counter += 1
        secret = int.from_bytes(okm[:_KEYGEN_L], "big") % CURVE_ORDER
    return secret.to_bytes(SECRET_KEY_SIZE, "big")


def _secret_key(secret: bytes) -> PrivateKey:
    if not isinstance(secret, _BYTES) or len(secret) != SECRET_KEY_SIZE:
        raise BlsError(f"secret key must be {SECRET_KEY_SIZE} bytes")
    if not 0 < int.from_bytes(secret, "big") < CURVE_ORDER:
        raise BlsError("secret key must be in [1, r)")
    return PrivateKey.from_bytes(bytes(secret))


@lru_cache(maxsize=4096)
def _parse_public_key(raw: bytes) -> G1Element:
    """Checked parse (cached: validator keys recur). Exceptions are not cached."""
    if len(raw) != PUBLIC_KEY_SIZE:
        raise BlsError(f"public key must be {PUBLIC_KEY_SIZE} bytes, got {len(raw)}")
    try:
        point = G1Element.from_bytes(raw)
    except (ValueError, RuntimeError) as exc:
        raise BlsError(f"public key is not a valid compressed G1 point in the subgroup: {exc}") from None
    if point == G1Element():
        raise BlsError("public key is the identity (point at infinity)")
    return point


def _public_key(raw: bytes) -> G1Element:
    if not isinstance(raw, _BYTES):
        raise BlsError("public key must be bytes")
    return _parse_public_key(bytes(raw))


@lru_cache(maxsize=4096)
def _parse_signature(raw: bytes) -> G2Element:
    """Checked parse (cached: a vote's share is parsed when it is verified and again when it is aggregated)."""
    try:
        return G2Element.from_bytes(raw)
    except (ValueError, RuntimeError) as exc:
        raise BlsError(f"signature is not a valid compressed G2 point in the subgroup: {exc}") from None


def _signature(raw: bytes) -> G2Element:
    if not isinstance(raw, _BYTES) or len(raw) != SIGNATURE_SIZE:
        raise BlsError(f"signature must be {SIGNATURE_SIZE} bytes")
    return _parse_signature(bytes(raw))


def _message(message: bytes) -> bytes:
    if not isinstance(message, _BYTES):
        raise BlsError("message must be bytes")
    return bytes(message)


def is_signature(raw: bytes) -> bool:
    """A 96-byte compressed G2 point in the subgroup: the checked parse ``verify`` starts with (cached)."""
    try:
        _signature(raw)
    except BlsError:
        return False
    return True


def check_public_key(raw: bytes) -> None:
    """KeyValidate: raise BlsError (wrong length / not a valid subgroup point / identity) or return."""
    _public_key(raw)


def public_key(secret: bytes) -> bytes:
    return bytes(_secret_key(secret).get_g1())


def sign(secret: bytes, message: bytes) -> bytes:
    return bytes(PopSchemeMPL.sign(_secret_key(secret), _message(message)))


def verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Any malformed, out-of-subgroup or identity input is simply invalid."""
    try:
        return PopSchemeMPL.verify(_public_key(public_key), _message(message), _signature(signature))
    except (BlsError, TypeError):
        return False


def pop_prove(secret: bytes) -> bytes:
    """Proof of possession of ``secret``: required before its public key may join an aggregate."""
    return bytes(PopSchemeMPL.pop_prove(_secret_key(secret)))


def pop_verify(public_key: bytes, proof: bytes) -> bool:
    try:
        return PopSchemeMPL.pop_verify(_public_key(public_key), _signature(proof))
    except (BlsError, TypeError):
        return False


def aggregate(signatures: Sequence[bytes]) -> bytes:
    """Sum of signatures; BlsError on an empty list or any invalid signature."""
    if len(signatures) == 0:
        raise BlsError("cannot aggregate an empty list of signatures")
    return bytes(PopSchemeMPL.aggregate([_signature(sig) for sig in signatures]))


def fast_aggregate_verify(public_keys: Sequence[bytes], message: bytes, signature: bytes) -> bool:
    """All ``public_keys`` (each with a verified proof of possession) signed ``message``.

    False - never an exception - for an empty key list or any bad key or signature.
    """
    try:
        if len(public_keys) == 0:
            return False
        points = [_public_key(pk) for pk in public_keys]
        return PopSchemeMPL.fast_aggregate_verify(points, _message(message), _signature(signature))
    except (BlsError, TypeError):
        return False


BATCH_BITS = 32
"""Bits of ``batch_verify``'s random coefficients: a batch with a bad signature passes with chance <= 2**-32."""


def batch_verify(public_keys: Sequence[bytes], message: bytes, signatures: Sequence[bytes]) -> bool:
    """Each ``signatures[i]`` is ``public_keys[i]``'s over ``message`` (True for none), up to a 2**-BATCH_BITS
    chance of passing a batch with a bad one: one Verify of ``sum(r_i * pk_i)`` and ``sum(r_i * sig_i)``, the
    ``r_i`` drawn here from the OS after the signatures are fixed, so signers who cannot predict them cannot
    make bad signatures cancel out (as they can in a plain aggregate). Random: node-local checks only, never
    a state transition. False - never an exception - for any bad key or signature, or unequal lengths."""
    try:
        if len(public_keys) != len(signatures):
            return False
        if len(signatures) <= 1:
            return all(verify(pk, message, sig) for pk, sig in zip(public_keys, signatures))
        points = [_public_key(pk) for pk in public_keys]
        sigs = [_signature(sig) for sig in signatures]
        scalars = [secrets.randbelow((1 << BATCH_BITS) - 1) + 1 for _ in sigs]
        key_sum, sig_sum = G1Element(), G2Element()
        for bit in reversed(range(BATCH_BITS)):  # Horner over the scalars' bits: double, then add this bit's subset
            chosen = [i for i, r in enumerate(scalars) if r >> bit & 1]
            key_sum += key_sum
            sig_sum += sig_sum
            for i in chosen:
                key_sum += points[i]
            if chosen:
                sig_sum += PopSchemeMPL.aggregate([sigs[i] for i in chosen])
        if key_sum == G1Element():  # identity: the combination proves nothing (chance ~ 2**-255 with valid keys)
            return False
        return PopSchemeMPL.verify(key_sum, _message(message), sig_sum)
    except (BlsError, TypeError):
        return False
