"""``Gonka``: the official ``openai`` client, with every request signed for a Transfer Agent and failing
over between TAs (``gonka/README.md``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import httpx
import openai

from gonka.transport import FailoverTransport, TransferAgent
from sdk.crypto import bech32, secp256k1
from sdk.crypto.request import inference_id

PLACEHOLDER = "http://gonka/v1"
"""The base URL the ``openai`` client sees; the transport replaces it with a TA's."""


class Gonka:
    """An OpenAI-compatible client for the Gonka network.

    ``client.chat.completions.create(...)`` (and every other ``openai.OpenAI`` attribute) works as with
    OpenAI. ``timeout`` bounds each attempt on one TA; ``max_retries`` is how many other TAs a request that
    failed (connection error, timeout, 5xx) may go to, with the same inference id. The ``openai`` client's own
    retries are off: they would sign a new timestamp, a new inference, charged again."""

    def __init__(
        self,
        ta_urls: Sequence[str],
        key: secp256k1.PrivateKey | str | bytes,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if isinstance(ta_urls, str):
            ta_urls = [ta_urls]
        if not ta_urls:
            raise ValueError("Gonka needs at least one Transfer Agent URL")
        if max_retries < 0:
            raise ValueError("max_retries must be at least 0")
        if isinstance(key, str):
            key = bytes.fromhex(key.removeprefix("0x"))
        self.key = key if isinstance(key, secp256k1.PrivateKey) else secp256k1.PrivateKey(key)
        self.address = bech32.encode(secp256k1.address_bytes(self.key.public_key))
        self.transport = FailoverTransport(self.key, ta_urls, timeout=timeout, max_retries=max_retries, inner=transport)
        self.http = httpx.Client(transport=self.transport, timeout=timeout)
        self.openai = openai.OpenAI(
            base_url=PLACEHOLDER, api_key="unused", http_client=self.http, timeout=timeout, max_retries=0
        )

    @property
    def chat(self) -> Any:
        return self.openai.chat

    @property
    def models(self) -> Any:
        return self.openai.models

    def __getattr__(self, name: str) -> Any:
        if name == "openai":  # not yet set: __init__ failed
            raise AttributeError(name)
        return getattr(self.openai, name)  # completions, with_options, with_raw_response, …

    @property
    def tas(self) -> list[TransferAgent]:
        """The TAs in use: discovered on first use, in failover order."""
        return self.transport.tas

    def discover(self) -> list[TransferAgent]:
        """Discover the TAs again (say, after some were down when the client started)."""
        return self.transport.discover()

    @property
    def last_inference_id(self) -> str | None:
        """Hex id of the last answered request (its ``X-Inference-Id``); None if that answer had none."""
        return self.transport.last_inference_id

    @property
    def last_ta(self) -> TransferAgent | None:
        """The TA that gave the last answer."""
        return self.transport.last_ta

    def inference_id(self, body: bytes, timestamp_ns: int) -> str:
        """Hex inference id of ``body`` (the exact bytes sent) signed at ``timestamp_ns`` by this client's key:
        the same whichever TA it goes through (``sdk.crypto.request.inference_id``)."""
        return inference_id(
            secp256k1.address_bytes(self.key.public_key), hashlib.sha256(body).digest(), timestamp_ns
        ).hex()

    def close(self) -> None:
        self.openai.close()

    def __enter__(self) -> Gonka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
