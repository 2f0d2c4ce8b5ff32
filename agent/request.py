"""A chat request as the TA's stages see it (``agent/pipeline.py``), and what each stage can come to.

The body is parsed once, right after its signature checks, into a ``ChatRequest`` (its terms, its seed, the
body the TA forwards); priced once into a ``Price`` (what the chain's start escrows). A stage gives its result
or its refusal as a value (an ``ApiError``, never raised), so the path reads top to bottom as vLLM's OpenAI
server's does; forwarding can also come to ``Retry`` (another node may serve it) or ``Unpaid`` (another host
has it), which the failover loop acts on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent.auth import default_seed
from agent.chain import Model
from sdk.http.errors import ApiError, bad_request
from sdk.http.signed import Requester, with_seed
from x.inference.client import ChatTerms, parse_request, parse_terms

GONE = 499
"""The status recorded for a client that left before its answer (nginx's convention); never sent."""

Outcome = int | ApiError
"""How a request ended: the status of the answer sent (or ``GONE``), or the refusal still to send."""


@dataclass(frozen=True)
class ChatRequest:
    """A signed chat request, parsed once: everything the stages after the signature check read."""

    requester: Requester
    terms: ChatTerms
    body: bytes
    """What the TA forwards: the signed body, with the TA's seed spliced in when it names none."""
    seed: int
    chosen_seed: int | None
    """The seed the TA chose (``X-Seed``: the host takes it out again to check the signature); None when the
    body names one."""
    fee_header: bytes | None
    """``X-Fee-Per-Token`` as sent: the fee of a body that names none (checked when the request is priced)."""

    @property
    def stream(self) -> bool:
        return self.terms.stream

    @classmethod
    def parse(cls, requester: Requester, headers: dict[bytes, bytes], body: bytes) -> ChatRequest | ApiError:
        """The request, or 400 for a body that is not a chat request of OpenAI's documented types."""
        try:
            terms = parse_terms(parse_request(body))
        except ApiError as error:
            return error
        fee_header = headers.get(b"x-fee-per-token")
        if terms.seed is not None:
            return cls(requester, terms, body, terms.seed, None, fee_header)
        seed = default_seed(requester.inference_id)  # below 2**53, exact in JSON
        return cls(requester, terms, with_seed(body, seed), seed, seed, fee_header)


@dataclass(frozen=True)
class Price:
    """What the chain's start escrows for a request: up to ``max_tokens × fee`` for its model, bound to its
    sampling parameters (``params_hash``)."""

    model: str
    max_tokens: int
    fee: int
    params_hash: bytes

    @property
    def escrow(self) -> int:
        return self.max_tokens * self.fee

    @classmethod
    def of(cls, request: ChatRequest, models: Mapping[str, Model], default_max_tokens: int) -> Price | ApiError:
        """The price against the chain's registry: 404 for an unknown model, 400 for max_tokens over its context
        or a fee below its price (the chain would refuse the start)."""
        terms = request.terms
        model = models.get(terms.model)
        if model is None:
            return ApiError(
                404,
                f"The model '{terms.model}' does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
                "model",
            )
        max_tokens = default_max_tokens if terms.max_tokens is None else terms.max_tokens
        if max_tokens > model.context_length:
            return bad_request(
                f"max_tokens {max_tokens} is over the model's context of {model.context_length}.",
                terms.max_tokens_param,
                "context_length_exceeded",
            )
        asked = asked_fee(request)
        if isinstance(asked, ApiError):
            return asked
        fee = model.price_per_token if asked is None else asked
        if fee < model.price_per_token:
            return bad_request(
                f"fee_per_token {fee} is below the model's price of {model.price_per_token}.",
                "fee_per_token",
                "fee_too_low",
            )
        return cls(model.id, max_tokens, fee, terms.params_hash(max_tokens, request.seed))


def asked_fee(request: ChatRequest) -> int | None | ApiError:
    """The fee per token the body names, else ``X-Fee-Per-Token``; None when neither does (the model's price)."""
    if request.terms.fee_per_token is not None or request.fee_header is None:
        return request.terms.fee_per_token
    try:
        fee = int(request.fee_header)
    except ValueError:
        return bad_request("X-Fee-Per-Token must be an integer.", "fee_per_token")
    if fee < 1:
        return bad_request("X-Fee-Per-Token must be a positive integer.", "fee_per_token")
    return fee


@dataclass(frozen=True)
class Retry:
    """The node failed before a byte reached the client: the request may go to another node. ``release``: the
    host's ``X-Release`` (its key and signature giving the inference up), b"" when it gave none."""

    release: bytes = b""


@dataclass(frozen=True)
class Unpaid:
    """The host refused the request as unpaid (its start did not land for it: another host has the inference).
    ``body``: its error body, relayed when no host the chain names answers instead."""

    body: bytes


@dataclass
class Attempts:
    """Where a request has been: the nodes that failed it, the host the chain has as its executor (None until
    the start), the start transaction that host is shown, and the release of the last host that failed it (for
    the reassignment to the next)."""

    tried: set[tuple[str, str]] = field(default_factory=set)
    executor: str | None = None
    start_tx: bytes = b""
    release: bytes = b""
