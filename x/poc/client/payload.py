"""Who may fetch an inference's payload from its executor, and how the asker proves who it is (host/README.md,
"PoC V2 duties").

The chain keeps only an answer's hashes; the validator the chain drew re-executes the answer, so it fetches the
payload (the request body and the answer with its top logprobs) from the executor's host, and keeps it once it
matches the chain's hashes. When it accuses the answer, the voters drawn for the dispute fetch the payload from the
executor's host, or, when that one is gone, from the accuser's, so an executor cannot escape its dispute by going
away. Each host serves it only to an address the chain's ``Validation`` record names for that host
(``may_fetch``), proven by a signature of that address's account key:

    signed bytes = "gonka/poc/payload/v1" ‖ inference id(32) ‖ host(20) ‖ u64(timestamp_ns)
    signature    = secp256k1 compact (64 bytes, low S) over sha256(signed bytes)

Integers big-endian. The address of the host asked (the executor, or the accuser) binds the request to the host
it is sent to, the timestamp to a moment (that host takes it within a freshness window of its clock). Whoever
serves it, a payload is taken only if it matches the chain's hashes.
"""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.crypto import secp256k1

PAYLOAD_DOMAIN = b"gonka/poc/payload/v1"
ADDRESS_SIZE = 20


def payload_request_bytes(inference_id: bytes, host: bytes, timestamp_ns: int) -> bytes:
    if len(inference_id) != 32 or len(host) != ADDRESS_SIZE or not 0 <= timestamp_ns < 1 << 64:
        raise ValueError("inference id must be 32 bytes, the host's address 20, the timestamp a u64")
    return PAYLOAD_DOMAIN + inference_id + host + timestamp_ns.to_bytes(8, "big")


def sign_payload_request(key: secp256k1.PrivateKey, inference_id: bytes, host: bytes, timestamp_ns: int) -> bytes:
    return key.sign(payload_request_bytes(inference_id, host, timestamp_ns))


def verify_payload_request(
    pubkey: bytes, inference_id: bytes, host: bytes, timestamp_ns: int, signature: bytes
) -> bool:
    """Any malformed input is simply invalid."""
    try:
        message = payload_request_bytes(inference_id, host, timestamp_ns)
    except ValueError:
        return False
    return secp256k1.verify(pubkey, message, signature)


def may_fetch(record: poc_pb2.Validation, address: str, host: str) -> bool:
    """Whether ``address`` may fetch the payload of ``record``'s inference from ``host``: from its executor, the
    validator the chain drew for it or a voter drawn for its dispute (they re-execute it too); from the accuser (the
    drawn validator, which kept the payload it checked), a voter drawn for its dispute, so the dispute is judged
    even when the executor is gone. Anyone else is refused, and no other host serves it, so a user's request and
    answer reach only the hosts the chain appointed."""
    if not address or not host:
        return False
    voter = any(v.voter == address for v in record.votes)
    if host == record.executor:
        return voter or record.validator == address
    return host == record.validator and voter


def deadline(record: poc_pb2.Validation) -> int:
    """The last height this host's verdict on ``record`` is accepted at: the vote deadline of a dispute (its voters
    are the ones it is listed for), else the drawn validator's."""
    return record.vote_deadline_height if record.status == poc_pb2.STATUS_DISPUTED else record.deadline_height
