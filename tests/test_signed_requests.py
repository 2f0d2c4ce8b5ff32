"""The framework's pieces for the inference network: RFC 6962 Merkle trees (sdk/crypto/merkle.py), checked
against the RFC's construction written out and CometBFT's known values, with proofs that verify and tampered
ones that do not; and the signed-request format (sdk/crypto/request.py)."""

from __future__ import annotations

import hashlib

import pytest

from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, merkle, request, secp256k1


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def test_roots_follow_rfc_6962() -> None:
    a, b, c = b"a", b"b", b"c"
    assert merkle.root([]) == sha(b"")
    assert merkle.root([a]) == sha(b"\x00a")
    assert merkle.root([a, b]) == sha(b"\x01" + sha(b"\x00a") + sha(b"\x00b"))
    # three leaves split 2 + 1 (the largest power of two below 3), not 1 + 2
    assert merkle.root([a, b, c]) == sha(b"\x01" + merkle.root([a, b]) + sha(b"\x00c"))
    # RFC 6962's leaf hash of the empty string, as Certificate Transparency logs publish it
    assert merkle.root([b""]).hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_every_leaf_proves_into_the_root_and_nothing_else_does(n: int) -> None:
    items = [bytes([i]) * 5 for i in range(n)]
    root = merkle.root(items)
    for i, item in enumerate(items):
        proof = merkle.inclusion_proof(items, i)
        assert len(proof) <= (n - 1).bit_length() and (i > 0 or len(proof) == (n - 1).bit_length())
        assert merkle.verify_inclusion(root, item, i, n, proof)
        assert not merkle.verify_inclusion(root, item + b"!", i, n, proof)  # tampered leaf
        assert not merkle.verify_inclusion(root, item, n, n, proof)  # past the end
        if n > 1:
            assert not merkle.verify_inclusion(root, item, (i + 1) % n, n, proof)  # wrong place
            assert not merkle.verify_inclusion(root, item, i, n, [b"\x00" * 32, *proof[1:]])  # tampered path
            assert not merkle.verify_inclusion(root, item, i, n, proof[:-1])  # short
        assert not merkle.verify_inclusion(root, item, i, n, [*proof, b"\x00" * 32])  # long
    with pytest.raises(IndexError):
        merkle.inclusion_proof(items, n)


def test_a_signed_request_verifies_only_as_signed() -> None:
    key, other = secp256k1.PrivateKey(b"\x31" * 32), secp256k1.PrivateKey(b"\x32" * 32)
    ta, other_ta = b"\x41" * 20, b"\x42" * 20
    body, ts = b'{"model":"m","messages":[]}', 1_700_000_000_000_000_000
    body_hash = sha(body)
    signature = request.sign_request(key, body, ts, ta)
    assert request.verify_request(key.public_key, body_hash, ts, ta, signature)
    for pubkey, digest, at, to in (
        (other.public_key, body_hash, ts, ta),
        (key.public_key, sha(b"{}"), ts, ta),
        (key.public_key, body_hash, ts + 1, ta),
        (key.public_key, body_hash, ts, other_ta),
        (key.public_key, body_hash[:31], ts, ta),
        (key.public_key, body_hash, -1, ta),
    ):
        assert not request.verify_request(pubkey, digest, at, to, signature)
    requester = bech32.decode(address_of(key))
    # the id names the requester, body and time, not the TA: a failover keeps it
    assert request.inference_id(requester, body_hash, ts) == sha(
        b"gonka/inference/v1" + requester + body_hash + ts.to_bytes(8, "big")
    )
    assert request.inference_id(requester, body_hash, ts) != request.inference_id(requester, body_hash, ts + 1)
