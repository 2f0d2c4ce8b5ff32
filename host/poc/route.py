"""``Payloads``: the serving side of PoC V2 (host/README.md, "PoC V2 duties"). The proxy hands it the payload
of every answer it finishes (``keep``: the bytes the requester signed and the node's whole answer), and the
validation duty the payloads it checked as a drawn validator (into the same store); ``POST /v1/poc/payload``
(``serve``) gives one to the hosts the chain drew to re-execute it, and to no one else: as the executor, to the
drawn validator and the dispute's voters; as the accuser, to the voters (so the dispute is judged even when the
executor is gone).

The request (``host.poc.wire.PayloadRequest``) must be signed by the asker's account key over the inference
id, this host's address and a timestamp within ``request_window_s`` of this host's clock
(``x.poc.client.payload``), and the chain's x/poc record of the inference must name the signer for this host
(``may_fetch``). Refusals, in this order, with OpenAI's error body: 400 a body that is not such a request
(``param`` names the field), 401 a key that is not the address's, a timestamp outside the window or a signature
that does not verify, 404 ``unknown_inference`` when the chain has no x/poc record of the id, 403
``not_assigned`` when the record does not name the signer for this host, 404 ``no_payload`` when this host kept
none (it did not serve that answer, or pruned it); 503 when its chain node does not answer. The chain's record is
read before the store, so a stranger learns of an id no more than the chain tells anyone."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from host.digest import KeptAnswer
from host.poc.config import PayloadConfig
from host.poc.counts import PayloadCounts
from host.poc.payloads import PayloadStore
from host.poc.wire import Payload, PayloadRequest
from sdk.client.querier import Querier
from sdk.client.rpc import RPCError, RPCNotFound
from sdk.crypto import bech32, secp256k1
from sdk.http.errors import ApiError, bad_request, unauthorized
from x.poc.client.payload import may_fetch, verify_payload_request
from x.poc.client.queries import validation

logger = logging.getLogger("gonka.host.poc")


def parse_request(raw: bytes) -> PayloadRequest:
    """The request in ``raw``; 400 naming the first field at fault."""
    try:
        return PayloadRequest.model_validate_json(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or None
        raise bad_request(f"Invalid payload request: {where or 'body'}: {first['msg']}", where) from None


class Payloads:
    """Keeps and serves this host's payloads (``store``), checking requests against the chain (``querier``);
    ``address`` is this host's account address (the executor's or the accuser's, as the record says)."""

    def __init__(
        self,
        store: PayloadStore,
        querier: Querier,
        address: str,
        config: PayloadConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.querier, self.config, self.clock = store, querier, config, clock
        self.address, self.host = address, bech32.decode(address)
        self.counts = PayloadCounts()

    def status(self) -> dict[str, Any]:
        return self.counts.as_dict()

    def keep(self, inference_id: bytes, body: bytes, answer: KeptAnswer) -> None:
        """Keep one payload; a store that fails is logged, never raised into the answer's relay."""
        try:
            self.store.put(inference_id, body, answer)
        except sqlite3.Error as error:
            self.counts.payloads_not_kept += 1
            logger.error("inference %s: its payload could not be kept: %r", inference_id.hex(), error)
            return
        self.counts.payloads_kept += 1

    def serve(self, raw: bytes) -> dict[str, Any]:
        """The payload document ``{inference_id, body, answer}`` for a request the checks pass; ``ApiError``
        otherwise. Blocking (the chain, the disk): the proxy runs it on a thread."""
        try:
            document = self._serve(raw)
        except ApiError:
            self.counts.payloads_refused += 1
            raise
        self.counts.payloads_served += 1
        return document

    def _serve(self, raw: bytes) -> dict[str, Any]:
        request = parse_request(raw)
        self._check_signature(request)
        try:
            record = validation(self.querier, request.inference_id)
        except RPCNotFound:
            raise ApiError(
                404, f"The chain has no PoC record of inference {request.inference_id.hex()}.", code="unknown_inference"
            ) from None
        except RPCError as error:
            raise ApiError(
                503, f"The host's chain node did not answer: {error}", "server_error", "chain_unavailable"
            ) from None
        if not may_fetch(record, request.validator, self.address):
            raise ApiError(
                403,
                f"{request.validator} is not drawn to re-execute inference {request.inference_id.hex()} with its"
                " payload from this host.",
                "permission_error",
                "not_assigned",
            )
        try:
            kept = self.store.get(request.inference_id)
        except sqlite3.Error as error:
            raise ApiError(500, f"The payload store failed: {error!r}", "server_error", "store_failed") from None
        if kept is None:
            raise ApiError(
                404, f"This host keeps no payload of inference {request.inference_id.hex()}.", code="no_payload"
            )
        body, answer = kept
        return Payload.model_construct(inference_id=request.inference_id, body=body, answer=answer).model_dump()

    def _check_signature(self, request: PayloadRequest) -> None:
        """400 for a validator that is no address; 401 unless ``pubkey`` is its key and signed this request for this
        host within the freshness window."""
        try:
            validator = bech32.decode(request.validator)
        except ValueError as error:
            raise bad_request(f"validator: {error}", "validator") from None
        if secp256k1.address_bytes(request.pubkey) != validator:
            raise unauthorized("pubkey is not the key of validator.", "address_mismatch")
        skew_s = abs(self.clock() - request.timestamp_ns / 1e9)
        if skew_s > self.config.request_window_s:
            raise unauthorized(
                f"timestamp_ns is {skew_s:.0f} s from this host's clock (at most {self.config.request_window_s:.0f}).",
                "stale_request",
            )
        if not verify_payload_request(
            request.pubkey, request.inference_id, self.host, request.timestamp_ns, request.signature
        ):
            raise unauthorized(
                "The signature does not verify for this inference, this host and timestamp.", "invalid_signature"
            )
