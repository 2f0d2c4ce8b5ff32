"""Signed requests over HTTP, as the Transfer Agent and a host's executor proxy both read them.

    Authorization        base64 of the 64-byte signature (``sdk.crypto.request.sign_request``); "Bearer " optional
    X-Requester-Address  the requester's bech32 address
    X-Requester-Pubkey   hex of its 33-byte compressed secp256k1 key, whose address must be X-Requester-Address
    X-Timestamp          nanoseconds since the epoch

The signature covers sha256(body) ‖ timestamp ‖ the TA's address, so it is good for one body, one moment and
one TA (``signed_headers``, ``verify_signed``; the TA's own window and replay checks are ``agent.auth``).

The request the TA forwards to a host's node carries the same four headers (the requester's signature, as it
came) plus ``X-TA-Address`` (the TA it was signed for), ``X-Inference-Id`` (hex) and, when the TA chose the seed,
``X-Seed`` (``forward_headers``): the host's executor proxy (``host/``) checks them with ``check_forwarded``
before its node runs anything. The TA adds a seed by splicing ``"seed":N`` before the body's closing brace
(``with_seed``), so the executor recovers the signed bytes exactly (``without_seed``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id, verify_request
from sdk.http.errors import unauthorized


@dataclass(frozen=True)
class Requester:
    """A request whose signature checked: who signed what, when, and its inference id."""

    address: str
    pubkey: bytes
    signature: bytes
    timestamp_ns: int
    body_hash: bytes
    inference_id: bytes


def header(headers: dict[bytes, bytes], name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


def signed_headers(headers: dict[bytes, bytes]) -> tuple[bytes, str, bytes, int]:
    """(signature, requester address, its pubkey, timestamp) as the four headers give them; 401 when one is
    missing or malformed."""
    authorization = header(headers, b"authorization")
    address = header(headers, b"x-requester-address")
    pubkey_hex = header(headers, b"x-requester-pubkey")
    timestamp_text = header(headers, b"x-timestamp")
    if not authorization or not address or not pubkey_hex or not timestamp_text:
        raise unauthorized(
            "Signed requests need the headers Authorization, X-Requester-Address, X-Requester-Pubkey and X-Timestamp.",
            "missing_signature",
        )
    if authorization[:7].lower() == "bearer ":
        authorization = authorization[7:]
    try:
        signature = base64.b64decode(authorization.strip(), validate=True)
        pubkey = bytes.fromhex(pubkey_hex)
        timestamp_ns = int(timestamp_text)
    except (ValueError, binascii.Error):
        raise unauthorized(
            "Authorization must be base64, X-Requester-Pubkey hex and X-Timestamp an integer.", "invalid_signature"
        ) from None
    return signature, address, pubkey, timestamp_ns


def verify_signed(
    signature: bytes, address: str, pubkey: bytes, timestamp_ns: int, body: bytes, ta_address: bytes
) -> Requester:
    """The requester of ``body`` signed for the TA ``ta_address``; 401 when the key is not the address's or the
    signature does not verify."""
    try:
        requester = bech32.decode(address)
    except ValueError as error:
        raise unauthorized(str(error), "address_mismatch") from None
    if len(pubkey) != secp256k1.PUBKEY_LEN or secp256k1.address_bytes(pubkey) != requester:
        raise unauthorized("X-Requester-Pubkey is not the key of X-Requester-Address.", "address_mismatch")
    body_hash = hashlib.sha256(body).digest()
    if not verify_request(pubkey, body_hash, timestamp_ns, ta_address, signature):
        raise unauthorized("The signature does not verify for this body, timestamp and TA.", "invalid_signature")
    return Requester(
        address, pubkey, signature, timestamp_ns, body_hash, inference_id(requester, body_hash, timestamp_ns)
    )


WHITESPACE = b" \t\r\n"


def with_seed(body: bytes, seed: int) -> bytes:
    """``body`` (a JSON object) with ``"seed":N`` spliced in before its closing brace, after a comma unless the
    object is empty; every other byte kept, so ``without_seed`` gives ``body`` back exactly."""
    end = len(body.rstrip(WHITESPACE))
    if not body[:end].endswith(b"}"):
        raise ValueError("the body is not a JSON object")
    separator = b"" if body[: end - 1].rstrip(WHITESPACE).endswith(b"{") else b","
    return body[: end - 1] + separator + b'"seed":' + str(seed).encode() + body[end - 1 :]


def without_seed(forwarded: bytes, seed: str) -> bytes | None:
    """The body ``with_seed(body, seed)`` was made from; None when ``forwarded`` is not such a body."""
    if not seed.isdigit():
        return None
    end = len(forwarded.rstrip(WHITESPACE))
    tail = b'"seed":' + seed.encode() + b"}"
    if not forwarded[:end].endswith(tail):
        return None
    head = forwarded[: end - len(tail)]
    if head.endswith(b","):
        head = head[:-1]
    return head + forwarded[end - 1 :]


def forward_headers(requester: Requester, ta_address: str, seed: int | None, start_tx: bytes = b"") -> bytes:
    """The header lines (each ending CRLF) the TA adds to the request it forwards: the requester's signed-request
    headers, ``X-TA-Address``, ``X-Inference-Id``, when the TA chose the seed ``X-Seed``, and ``X-Start-Tx`` (base64
    of the start transaction CheckTx took, for the executor's admission: ``host.admission``)."""
    lines = [
        b"authorization: " + base64.b64encode(requester.signature),
        b"x-requester-address: " + requester.address.encode(),
        b"x-requester-pubkey: " + requester.pubkey.hex().encode(),
        b"x-timestamp: " + str(requester.timestamp_ns).encode(),
        b"x-ta-address: " + ta_address.encode(),
        b"x-inference-id: " + requester.inference_id.hex().encode(),
    ]
    if seed is not None:
        lines.append(b"x-seed: " + str(seed).encode())
    if start_tx:
        lines.append(b"x-start-tx: " + base64.b64encode(start_tx))
    return b"".join(line + b"\r\n" for line in lines)


class Forwarded(NamedTuple):
    """A forwarded request whose signature checked: its requester, the TA (bech32) it was signed for, and the
    bytes the requester signed (the body less the TA's seed), whose sha256 is the chain's ``body_hash``."""

    requester: Requester
    ta: str
    signed: bytes


def check_forwarded(headers: dict[bytes, bytes], body: bytes) -> Forwarded:
    """The requester, the TA and the signed bytes of a request a TA forwarded; 401 (``ApiError``) unless the
    requester signed this body (less the TA's seed, when ``X-Seed`` says the TA added one) for ``X-TA-Address`` with
    the key of its address, and ``X-Inference-Id`` is its id. No time window and no replay cache: the chain's start
    (which checks the window and refuses a known id) is what the host's finish needs."""
    signature, address, pubkey, timestamp_ns = signed_headers(headers)
    ta_text = header(headers, b"x-ta-address")
    id_text = header(headers, b"x-inference-id")
    if not ta_text or not id_text:
        raise unauthorized(
            "A forwarded request needs the headers X-TA-Address and X-Inference-Id.", "missing_signature"
        )
    try:
        ta_address = bech32.decode(ta_text)
    except ValueError as error:
        raise unauthorized(f"X-TA-Address: {error}", "invalid_signature") from None
    seed = header(headers, b"x-seed")
    signed = body if seed is None else without_seed(body, seed.strip())
    if signed is None:
        raise unauthorized("The body does not carry the seed X-Seed names where the TA puts it.", "invalid_signature")
    requester = verify_signed(signature, address, pubkey, timestamp_ns, signed, ta_address)
    if requester.inference_id.hex() != id_text.strip().lower():
        raise unauthorized("X-Inference-Id is not the id of this signed request.", "inference_id_mismatch")
    return Forwarded(requester, ta_text, signed)
