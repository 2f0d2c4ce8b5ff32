"""The httpx transport under the SDK's ``openai`` client: it owns TA discovery, signing and failover.

The ``openai`` client sends every request to a placeholder base URL (``http://gonka/v1``); this transport
picks a Transfer Agent, rewrites the URL to it, signs the body for that TA's address and sends it. On a
connection error, a timeout or a 5xx before the answer's first byte, the same body with the same timestamp
(so the same inference id) is signed for the next TA and sent there. Any other answer (2xx, 4xx) is final.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from sdk.client.signing import request_headers, verify_identity
from sdk.crypto import secp256k1

log = logging.getLogger("gonka.sdk")
MAX_DISCOVERED = 64
"""At most this many TA URLs are asked for their identity in one discovery."""
KEEPALIVE_EXPIRY_S = 2.0
"""An idle pooled connection to a TA is dropped after this long: well before a server closes it (TAs keep them
30 s, uvicorn's default 5 s). Reusing one a server is closing at that moment loses the request on it, and
with one TA down that one failure would be the request's last."""


@dataclass(frozen=True)
class TransferAgent:
    url: str
    """Base URL, without ``/v1`` and without a trailing slash."""
    address: str
    """The bech32 address its ``/v1/identity`` proved: what requests to it are signed for."""
    chain_id: str


def identity(url: str, timeout: float, transport: httpx.BaseTransport) -> dict[str, Any] | None:
    """A TA's verified ``/v1/identity`` document, or None when it is unreachable, not JSON or mis-signed.
    (Through ``transport`` itself: a client around it would close it, and the connections others use.)"""
    request = httpx.Request("GET", f"{url}/v1/identity", extensions={"timeout": httpx.Timeout(timeout).as_dict()})
    try:
        response = transport.handle_request(request)
        try:
            response.read()
        finally:
            response.close()
        document = response.json()
    except (httpx.HTTPError, ValueError) as error:
        log.info("TA %s skipped: %s", url, error)
        return None
    if response.status_code != 200 or not isinstance(document, dict) or not verify_identity(document):
        log.warning("TA %s skipped: its identity is not validly signed", url)
        return None
    return document


def discover(urls: Iterable[str], timeout: float, transport: httpx.BaseTransport) -> list[TransferAgent]:
    """The TAs given, then those their identities list (breadth first), one per address; TAs that are
    unreachable, mis-signed, or of another chain than the first one found are skipped."""
    queue = deque(url.rstrip("/") for url in urls)
    asked: set[str] = set()
    found: list[TransferAgent] = []
    while queue and len(asked) < MAX_DISCOVERED:
        url = queue.popleft()
        if url in asked:
            continue
        asked.add(url)
        document = identity(url, timeout, transport)
        if document is None or any(ta.address == document["address"] for ta in found):
            continue
        if found and document.get("chain_id") != found[0].chain_id:
            log.warning("TA %s skipped: chain %r, not %r", url, document.get("chain_id"), found[0].chain_id)
            continue
        found.append(TransferAgent(url, document["address"], str(document.get("chain_id"))))
        others = document.get("tas")
        if isinstance(others, list):
            queue.extend(other.rstrip("/") for other in others if isinstance(other, str))
    return found


class _Resumed(httpx.SyncByteStream):
    """A response stream whose first chunk was already read (to be sure the TA answers before failing over)."""

    def __init__(self, first: bytes, rest: Iterator[bytes], close: Callable[[], None]) -> None:
        self.first, self.rest, self._close = first, rest, close

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        yield from self.rest

    def close(self) -> None:
        self._close()


def settle(response: httpx.Response) -> httpx.Response:
    """The response with its first bytes in hand: the whole body, or a stream's first chunk. Raises
    ``httpx.TransportError`` (the response closed) if the TA fails before them."""
    try:
        chunks = iter(response.stream)  # type: ignore[arg-type]  # a transport's response: a SyncByteStream
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            first = next(chunks, b"")
            while first == b"":
                first = next(chunks)
            stream: httpx.SyncByteStream = _Resumed(first, chunks, response.close)
        else:
            stream = httpx.ByteStream(b"".join(chunks))
            response.close()
    except StopIteration:
        response.close()
        raise httpx.RemoteProtocolError("the TA's stream ended before its first event") from None
    except BaseException:
        response.close()
        raise
    return httpx.Response(response.status_code, headers=response.headers, stream=stream, extensions=response.extensions)


class FailoverTransport(httpx.BaseTransport):
    """Sends each request to one TA after another until one answers (see the module's docstring).

    The TA that answered last is tried first next time; ``max_retries`` is how many other TAs one request
    may go to. Thread-safe: the ``openai`` client may be shared between threads."""

    def __init__(
        self,
        key: secp256k1.PrivateKey,
        ta_urls: Iterable[str],
        *,
        timeout: float,
        max_retries: int,
        inner: httpx.BaseTransport | None = None,
    ) -> None:
        self.key = key
        self.ta_urls = list(ta_urls)
        self.timeout = timeout
        self.max_retries = max_retries
        self.inner = inner or httpx.HTTPTransport(
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=KEEPALIVE_EXPIRY_S)
        )
        self.lock = threading.Lock()
        self.discovering = threading.Lock()
        self._tas: list[TransferAgent] | None = None
        self.preferred = 0
        self.last_inference_id: str | None = None
        self.last_ta: TransferAgent | None = None

    def discover(self) -> list[TransferAgent]:
        """Ask the TAs for their identities again (the first request does it once)."""
        with self.discovering:
            tas = discover(self.ta_urls, self.timeout, self.inner)
            with self.lock:
                self._tas, self.preferred = tas, 0
        return tas

    @property
    def tas(self) -> list[TransferAgent]:
        if self._tas is None:
            with self.discovering:  # the first requests from several threads: one discovery
                if self._tas is None:
                    self._tas = discover(self.ta_urls, self.timeout, self.inner)
        return self._tas

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        tas = self.tas
        if not tas:
            raise httpx.ConnectError(
                f"no Transfer Agent answered with a valid identity among {self.ta_urls}", request=request
            )
        body = request.read()
        timestamp = time.time_ns()
        first = self.preferred
        failure: httpx.Response | httpx.TransportError | None = None
        for i in range(min(len(tas), self.max_retries + 1)):
            ta = tas[(first + i) % len(tas)]
            try:
                response = settle(self.inner.handle_request(self.signed(request, body, timestamp, ta)))
            except httpx.TransportError as error:
                log.warning("TA %s failed (%r); failing over", ta.url, error)
                failure = error
                continue
            if response.status_code >= 500:
                log.warning("TA %s answered %d; failing over", ta.url, response.status_code)
                failure = response
                continue
            with self.lock:
                self.preferred = (first + i) % len(tas)
                self.last_ta = ta
                self.last_inference_id = response.headers.get("x-inference-id")
            return response
        if isinstance(failure, httpx.Response):
            return failure
        assert failure is not None
        raise failure

    def signed(self, request: httpx.Request, body: bytes, timestamp: int, ta: TransferAgent) -> httpx.Request:
        """``request`` addressed to ``ta`` and signed for its address."""
        headers = httpx.Headers([(k, v) for k, v in request.headers.multi_items() if k.lower() != "host"])
        headers.update(request_headers(self.key, body, ta.address, timestamp))
        url = httpx.URL(ta.url + request.url.raw_path.decode("ascii"))
        return httpx.Request(request.method, url, headers=headers, content=body, extensions=request.extensions)

    def close(self) -> None:
        self.inner.close()
