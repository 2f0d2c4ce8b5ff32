"""Signed inference requests: how a requester authorises one OpenAI-style request through one Transfer Agent,
checked by the TA (HTTP headers) and again by the chain (x/inference's MsgStartInference), so a TA cannot invent
or replay requests.

    signed bytes  = sha256(body) ‖ u64(timestamp_ns) ‖ ta_address(20)
    signature     = secp256k1 compact (64 bytes, low S) over sha256(signed bytes), by the requester's key
    inference id  = sha256("gonka/inference/v1" ‖ requester(20) ‖ sha256(body) ‖ u64(timestamp_ns))
    release       = secp256k1 compact over sha256("gonka/inference/release/v1" ‖ inference id), by the executor:
                    it gives the inference up (its node failed before answering), so its TA may reassign it at once

Integers big-endian. The inference id leaves the TA out: a client that fails over to another TA signs the same
body and timestamp for the new TA and keeps the same id, so the chain never starts (or charges) it twice.
"""

from __future__ import annotations

import hashlib

from sdk.crypto import secp256k1

ID_DOMAIN = b"gonka/inference/v1"
RELEASE_DOMAIN = b"gonka/inference/release/v1"
ADDRESS_SIZE = 20


def signed_bytes(body_hash: bytes, timestamp_ns: int, ta_address: bytes) -> bytes:
    if len(body_hash) != 32 or len(ta_address) != ADDRESS_SIZE or not 0 <= timestamp_ns < 1 << 64:
        raise ValueError("body hash must be 32 bytes, TA address 20, timestamp a u64")
    return body_hash + timestamp_ns.to_bytes(8, "big") + ta_address


def sign_request(key: secp256k1.PrivateKey, body: bytes, timestamp_ns: int, ta_address: bytes) -> bytes:
    return key.sign(signed_bytes(hashlib.sha256(body).digest(), timestamp_ns, ta_address))


def verify_request(pubkey: bytes, body_hash: bytes, timestamp_ns: int, ta_address: bytes, signature: bytes) -> bool:
    """Any malformed input is simply invalid."""
    try:
        message = signed_bytes(body_hash, timestamp_ns, ta_address)
    except ValueError:
        return False
    return secp256k1.verify(pubkey, message, signature)


def inference_id(requester: bytes, body_hash: bytes, timestamp_ns: int) -> bytes:
    return hashlib.sha256(ID_DOMAIN + requester + body_hash + timestamp_ns.to_bytes(8, "big")).digest()


def sign_release(key: secp256k1.PrivateKey, inference: bytes) -> bytes:
    """The executor's word that it will not answer (nor finish) ``inference``."""
    return key.sign(RELEASE_DOMAIN + inference)


def verify_release(pubkey: bytes, inference: bytes, signature: bytes) -> bool:
    return secp256k1.verify(pubkey, RELEASE_DOMAIN + inference, signature)
