"""Signing requests for a Transfer Agent, and checking what a TA signs about itself.

``request_headers`` gives the four headers a TA checks (``agent/README.md``) for one request body;
``SignedRequests`` is the same as an ``httpx.Auth``, so the official ``openai`` client signs every request:

    http = httpx.Client(auth=SignedRequests(key, ta_address))
    client = openai.OpenAI(base_url=f"{ta_url}/v1", api_key="unused", http_client=http)

``verify_identity`` checks a TA's ``/v1/identity`` document: its signature and that its address is its key's.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Generator
from typing import Any

import httpx

from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import sign_request


def request_headers(
    key: secp256k1.PrivateKey, body: bytes, ta_address: str, timestamp_ns: int | None = None
) -> dict[str, str]:
    """The signed-request headers for ``body`` sent to the TA whose bech32 address is ``ta_address``."""
    timestamp = time.time_ns() if timestamp_ns is None else timestamp_ns
    signature = sign_request(key, body, timestamp, bech32.decode(ta_address))
    pubkey = key.public_key
    return {
        "Authorization": "Bearer " + base64.b64encode(signature).decode(),
        "X-Requester-Address": bech32.encode(secp256k1.address_bytes(pubkey)),
        "X-Requester-Pubkey": pubkey.hex(),
        "X-Timestamp": str(timestamp),
    }


class SignedRequests(httpx.Auth):
    """Signs each request's body for one TA; the clock is injectable so a test can sign a stale request."""

    requires_request_body = True

    def __init__(self, key: secp256k1.PrivateKey, ta_address: str, clock: Callable[[], int] = time.time_ns) -> None:
        self.key = key
        self.ta_address = ta_address
        self.clock = clock

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers.update(request_headers(self.key, request.content, self.ta_address, self.clock()))
        yield request


def canonical_json(document: Any) -> bytes:
    """Sorted keys, no spaces, ASCII: the bytes a TA signs (without the ``signature`` field)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign_document(key: secp256k1.PrivateKey, document: dict[str, Any]) -> dict[str, Any]:
    """The document with ``signature``: base64 of the 64-byte signature over sha256(canonical JSON)."""
    signature = key.sign(canonical_json(document))
    return {**document, "signature": base64.b64encode(signature).decode()}


def verify_identity(document: dict[str, Any]) -> bool:
    """Whether a TA's identity document is signed by the key it names, and that key is its address's."""
    try:
        body = {k: v for k, v in document.items() if k != "signature"}
        pubkey = bytes.fromhex(document["pubkey"])
        signature = base64.b64decode(document["signature"], validate=True)
        if bech32.decode(document["address"]) != secp256k1.address_bytes(pubkey):
            return False
    except (KeyError, TypeError, ValueError, binascii.Error):
        return False
    return secp256k1.verify(pubkey, canonical_json(body), signature)
