"""What two hosts say to each other about a payload (``POST /v1/poc/payload`` on the executor's proxy, or the
accuser's during a dispute): the asker's signed request (``PayloadRequest``; x/poc/client/payload.py signs and
checks it) and the answer (``Payload``)."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from host.digest import KeptAnswer


def _hex(text: object) -> bytes:
    if not isinstance(text, str):
        raise ValueError("expected a hex string")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError("not hex") from None


def _base64(text: object) -> bytes:
    if not isinstance(text, str):
        raise ValueError("expected a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise ValueError("not base64") from None


Hex = Annotated[bytes, BeforeValidator(_hex), PlainSerializer(lambda raw: raw.hex(), return_type=str)]
Base64 = Annotated[
    bytes, BeforeValidator(_base64), PlainSerializer(lambda raw: base64.b64encode(raw).decode(), return_type=str)
]


class PayloadRequest(BaseModel):
    """A drawn validator's or voter's request for an inference's payload, signed by its account key over
    ``x.poc.client.payload.payload_request_bytes(inference_id, host asked, timestamp_ns)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    inference_id: Hex = Field(min_length=32, max_length=32)
    validator: str = Field(min_length=1, max_length=128)
    """The asker's bech32 account address: the chain's record must name it (``may_fetch``)."""
    timestamp_ns: int = Field(ge=0, lt=1 << 64)
    pubkey: Hex = Field(min_length=33, max_length=33)
    """The validator's compressed secp256k1 key, whose address must be ``validator``."""
    signature: Base64 = Field(min_length=64, max_length=64)


class Payload(BaseModel):
    """What a validator re-executes: the request body its requester signed (sha256: the chain's ``body_hash``)
    and the node's answer as the executor kept it (its hashes: the chain's ``response_hash`` and
    ``logprobs_digest``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    inference_id: Hex
    body: Base64
    answer: KeptAnswer
