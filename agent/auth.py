"""Signed requests: the TA's checks of the four headers, before anything else happens to a request.

    Authorization        base64 of the 64-byte signature (``sdk.crypto.request.sign_request``); "Bearer " optional
    X-Requester-Address  the requester's bech32 address
    X-Requester-Pubkey   hex of its 33-byte compressed secp256k1 key, whose address must be X-Requester-Address
    X-Timestamp          nanoseconds since the epoch; at most ``window_old_s`` old and ``window_ahead_s`` ahead

The signature covers sha256(body) ‖ timestamp ‖ this TA's address, so it is good for one body, one moment and
one TA. The inference id (``sdk.crypto.request.inference_id``) of a request is kept in a bounded replay cache
while its timestamp is inside the window: the same signed request again is 401 ``replayed_request``. An id
is reserved as soon as its signature checks, and released when the TA refuses the request before the chain
has started it, so a request refused for a reason the requester can fix (a full queue) may be sent again.
When the cache is full its oldest entry goes: the chain, which refuses a known inference id, stays the last
word on replays.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from agent.errors import unauthorized
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id, verify_request


@dataclass(frozen=True)
class Requester:
    """A request whose signature checked: who signed what, when, and its inference id."""

    address: str
    pubkey: bytes
    signature: bytes
    timestamp_ns: int
    body_hash: bytes
    inference_id: bytes


class ReplayCache:
    """Inference ids seen within the window, oldest first; every entry lives the same ``horizon_ns``."""

    def __init__(self, capacity: int, horizon_ns: int) -> None:
        self.capacity = capacity
        self.horizon_ns = horizon_ns
        self._expiry: OrderedDict[bytes, int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._expiry)

    def reserve(self, key: bytes, now_ns: int) -> bool:
        """False if ``key`` is already held; otherwise hold it."""
        expiry = self._expiry
        while expiry:
            oldest, until = next(iter(expiry.items()))
            if until > now_ns and len(expiry) < self.capacity:
                break
            del expiry[oldest]
        if key in expiry:
            return False
        expiry[key] = now_ns + self.horizon_ns
        return True

    def release(self, key: bytes) -> None:
        self._expiry.pop(key, None)


def header(headers: dict[bytes, bytes], name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


class Authenticator:
    def __init__(self, ta_address: bytes, window_old_s: float, window_ahead_s: float, replay_capacity: int) -> None:
        self.ta_address = ta_address
        self.old_ns = int(window_old_s * 1e9)
        self.ahead_ns = int(window_ahead_s * 1e9)
        self.replays = ReplayCache(replay_capacity, self.old_ns + self.ahead_ns)

    def check(self, headers: dict[bytes, bytes], body: bytes, now_ns: int) -> Requester:
        """The requester, with its inference id reserved; ``AgentError`` 401 otherwise."""
        authorization = header(headers, b"authorization")
        address = header(headers, b"x-requester-address")
        pubkey_hex = header(headers, b"x-requester-pubkey")
        timestamp_text = header(headers, b"x-timestamp")
        if not authorization or not address or not pubkey_hex or not timestamp_text:
            raise unauthorized("Signed requests need the headers Authorization, X-Requester-Address, "
                               "X-Requester-Pubkey and X-Timestamp.", "missing_signature")
        if authorization[:7].lower() == "bearer ":
            authorization = authorization[7:]
        try:
            signature = base64.b64decode(authorization.strip(), validate=True)
            pubkey = bytes.fromhex(pubkey_hex)
            timestamp_ns = int(timestamp_text)
        except (ValueError, binascii.Error):
            raise unauthorized("Authorization must be base64, X-Requester-Pubkey hex and X-Timestamp an integer.",
                               "invalid_signature") from None
        if not now_ns - self.old_ns <= timestamp_ns <= now_ns + self.ahead_ns:
            raise unauthorized(f"X-Timestamp {timestamp_ns} is outside the window ({self.old_ns // 10**9} s old, "
                               f"{self.ahead_ns // 10**9} s ahead of the TA's clock {now_ns}).", "stale_timestamp")
        try:
            requester = bech32.decode(address)
        except ValueError as error:
            raise unauthorized(str(error), "address_mismatch") from None
        if len(pubkey) != secp256k1.PUBKEY_LEN or secp256k1.address_bytes(pubkey) != requester:
            raise unauthorized("X-Requester-Pubkey is not the key of X-Requester-Address.", "address_mismatch")
        body_hash = hashlib.sha256(body).digest()
        if not verify_request(pubkey, body_hash, timestamp_ns, self.ta_address, signature):
            raise unauthorized("The signature does not verify for this body, timestamp and TA.", "invalid_signature")
        inference = inference_id(requester, body_hash, timestamp_ns)
        if not self.replays.reserve(inference, now_ns):
            raise unauthorized("This signed request was already received (replayed request).", "replayed_request")
        return Requester(address, pubkey, signature, timestamp_ns, body_hash, inference)

    def release(self, requester: Requester) -> None:
        self.replays.release(requester.inference_id)
