"""Who may fetch an inference's payload from its executor, and how the asker proves who it is (host/README.md,
"PoC V2 duties").

The chain keeps only an answer's hashes; the validator the chain drew re-executes the answer, so it fetches the
payload (the request body and the answer with its top logprobs) from the executor's host. The executor serves it
only to an address the chain's ``Validation`` record names (``may_fetch``), proven by a signature of that
address's account key:

    signed bytes = "gonka/poc/payload/v1" ‖ inference id(32) ‖ executor(20) ‖ u64(timestamp_ns)
    signature    = secp256k1 compact (64 bytes, low S) over sha256(signed bytes)

Integers big-endian. The executor's address binds the request to the host it is sent to, the timestamp to a
moment (the executor takes it within a freshness window of its clock).
"""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.crypto import secp256k1

PAYLOAD_DOMAIN = b"gonka/poc/payload/v1"
ADDRESS_SIZE = 20


def payload_request_bytes(inference_id: bytes, executor: bytes, timestamp_ns: int) -> bytes:
    if len(inference_id) != 32 or len(executor) != ADDRESS_SIZE or not 0 <= timestamp_ns < 1 << 64:
        raise ValueError("inference id must be 32 bytes, the executor's address 20, the timestamp a u64")
    return PAYLOAD_DOMAIN + inference_id + executor + timestamp_ns.to_bytes(8, "big")


def sign_payload_request(key: secp256k1.PrivateKey, inference_id: bytes, executor: bytes, timestamp_ns: int) -> bytes:
    return key.sign(payload_request_bytes(inference_id, executor, timestamp_ns))


def verify_payload_request(
    pubkey: bytes, inference_id: bytes, executor: bytes, timestamp_ns: int, signature: bytes
) -> bool:
    """Any malformed input is simply invalid."""
    try:
        message = payload_request_bytes(inference_id, executor, timestamp_ns)
    except ValueError:
        return False
    return secp256k1.verify(pubkey, message, signature)


def may_fetch(record: poc_pb2.Validation, address: str) -> bool:
    """Whether ``address`` may fetch the payload of ``record``'s inference: the validator the chain drew for it,
    or a voter drawn for its dispute (they re-execute it too); anyone else is refused, so an executor hands its
    users' requests and answers only to the hosts the chain appointed."""
    return bool(address) and (record.validator == address or any(v.voter == address for v in record.votes))


def deadline(record: poc_pb2.Validation) -> int:
    """The last height this host's verdict on ``record`` is accepted at: the vote deadline of a dispute (its voters
    are the ones it is listed for), else the drawn validator's."""
    return record.vote_deadline_height if record.status == poc_pb2.STATUS_DISPUTED else record.deadline_height
