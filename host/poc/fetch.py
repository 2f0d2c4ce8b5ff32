"""``PayloadFetcher``: a drawn validator or voter asking a host for an inference's payload (``POST
/v1/poc/payload`` on each URL that host registered for its nodes: the executor's, or during a dispute the
accuser's), signed with the asker's account key (``x.poc.client.payload``)."""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable

import httpx

from host.poc.wire import Payload
from sdk.crypto import bech32, secp256k1
from x.poc.client.payload import sign_payload_request

logger = logging.getLogger("gonka.host.poc")


class PayloadFetcher:
    """Fetches payloads as the host ``key``; blocking (the duty's thread)."""

    def __init__(self, key: secp256k1.PrivateKey, timeout_s: float, clock: Callable[[], float] = time.time) -> None:
        self.key, self.clock = key, clock
        self.validator = bech32.encode(secp256k1.address_bytes(key.public_key))
        self.client = httpx.Client(timeout=timeout_s)

    def close(self) -> None:
        self.client.close()

    def request(self, inference_id: bytes, host: str) -> dict[str, object]:
        """The signed request body for ``inference_id`` at the host ``host`` (its account address), stamped now."""
        timestamp_ns = int(self.clock() * 1e9)
        signature = sign_payload_request(self.key, inference_id, bech32.decode(host), timestamp_ns)
        return {
            "inference_id": inference_id.hex(),
            "validator": self.validator,
            "timestamp_ns": timestamp_ns,
            "pubkey": self.key.public_key.hex(),
            "signature": base64.b64encode(signature).decode(),
        }

    def fetch(self, urls: list[str], host: str, inference_id: bytes) -> Payload | None:
        """The payload from the first of ``urls`` (the host ``host``'s) that serves one for this id; None when none
        does (each failure logged)."""
        for url in urls:
            try:
                response = self.client.post(url.rstrip("/") + "/v1/poc/payload", json=self.request(inference_id, host))
                if response.status_code != 200:
                    logger.info(
                        "inference %s: %s refused its payload: %d %s",
                        inference_id.hex(), url, response.status_code, response.text[:200],
                    )  # fmt: skip
                    continue
                payload = Payload.model_validate(response.json())
            except (httpx.HTTPError, ValueError) as error:  # pydantic's ValidationError is a ValueError
                logger.info("inference %s: no payload from %s: %r", inference_id.hex(), url, error)
                continue
            if payload.inference_id == inference_id:
                return payload
        return None
