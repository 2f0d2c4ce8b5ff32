"""Signed requests: the TA's checks of the four headers (``sdk.http.signed``), before anything else happens to a
request.

The timestamp may be at most ``window_old_s`` old and ``window_ahead_s`` ahead of the TA's clock. The inference
id (``sdk.crypto.request.inference_id``) of a request is kept in a bounded replay cache while its timestamp is
inside the window: the same signed request again is 401 ``replayed_request``. An id is reserved as soon as its
signature checks, and released when the TA refuses the request before the chain has started it, so a request
refused for a reason the requester can fix (a full queue) may be sent again. When the cache is full its oldest
entry goes: the chain, which refuses a known inference id, stays the last word on replays.
"""

from __future__ import annotations

from collections import OrderedDict

from sdk.http.errors import unauthorized
from sdk.http.signed import Requester, signed_headers, verify_signed


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


class Authenticator:
    def __init__(self, ta_address: bytes, window_old_s: float, window_ahead_s: float, replay_capacity: int) -> None:
        self.ta_address = ta_address
        self.old_ns = int(window_old_s * 1e9)
        self.ahead_ns = int(window_ahead_s * 1e9)
        self.replays = ReplayCache(replay_capacity, self.old_ns + self.ahead_ns)

    def check(self, headers: dict[bytes, bytes], body: bytes, now_ns: int) -> Requester:
        """The requester, with its inference id reserved; ``ApiError`` 401 otherwise."""
        signature, address, pubkey, timestamp_ns = signed_headers(headers)
        if not now_ns - self.old_ns <= timestamp_ns <= now_ns + self.ahead_ns:
            raise unauthorized(
                f"X-Timestamp {timestamp_ns} is outside the window ({self.old_ns // 10**9} s old, "
                f"{self.ahead_ns // 10**9} s ahead of the TA's clock {now_ns}).",
                "stale_timestamp",
            )
        requester = verify_signed(signature, address, pubkey, timestamp_ns, body, self.ta_address)
        if not self.replays.reserve(requester.inference_id, now_ns):
            raise unauthorized("This signed request was already received (replayed request).", "replayed_request")
        return requester

    def release(self, requester: Requester) -> None:
        self.replays.release(requester.inference_id)


def default_seed(inference: bytes) -> int:
    """The seed the TA sets when a request names none: the first 53 bits of its id (exact in any JSON reader)."""
    return int.from_bytes(inference[:8], "big") >> 11
