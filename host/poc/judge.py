"""What a validator checks of a fetched payload before its ML node re-executes it, and what it asks the node
(host/README.md, "PoC V2 duties"). Pure functions of the payload and the chain's ``Inference`` record.

A payload is the answer the chain's hashes commit to only if sha256 of its body is the record's ``body_hash`` and
its answer's ``response_hash`` and ``logprobs_digest`` (``host.digest.KeptAnswer``) are the record's. And it can
be re-executed only if it is one choice whose token logprobs spell its text and list at least ``TOP_LOGPROBS``
alternatives each (what an honest host asks its node for, ``host/terms.py``): otherwise the hashes would commit
to a text the logprobs do not, or to lists too short to compare. A payload that fails any of this is a failed
validation (``hash_mismatch``, then ``answer_problem``, name why)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from host.poc.wire import Payload
from host.terms import TOP_LOGPROBS
from protogen.gonka.inference.v1 import inference_pb2

SAMPLING = ("temperature", "top_p", "stop")
"""The body's sampling fields the node replays (null or absent: the generator's defaults)."""
PPM = 1_000_000


def score_ppm(score: float) -> int:
    """A similarity in [0, 1] as x/poc's score: parts per million, rounded, clamped to [0, 10⁶] (NaN: 0)."""
    return 0 if math.isnan(score) else min(PPM, max(0, round(score * PPM)))


def _text_of(entries: list[Any]) -> str:
    """The text the token entries spell, decoded as the node decodes its answer (UTF-8, errors replaced)."""
    raw = b"".join(
        bytes(entry["bytes"]) if entry.get("bytes") is not None else str(entry["token"]).encode() for entry in entries
    )
    return raw.decode("utf-8", errors="replace")


def hash_mismatch(payload: Payload, record: inference_pb2.Inference) -> str | None:
    """The first of the chain's hashes ``payload`` does not match; None when it is the payload ``record`` commits
    to, whichever host served it (the executor, or the accuser that kept it)."""
    if hashlib.sha256(payload.body).digest() != record.body_hash:
        return "body_hash"
    if payload.answer.response_hash() != record.response_hash:
        return "response_hash"
    if payload.answer.logprobs_digest() != record.logprobs_digest:
        return "logprobs_digest"
    return None


def answer_problem(payload: Payload) -> str | None:
    """Why ``payload`` (one ``hash_mismatch`` passed) is not an answer to re-execute; None when it is."""
    answer = payload.answer
    if len(answer.choices) != 1:
        return "not_one_choice"
    choice = answer.choices[0]
    if choice.logprobs is None:
        return "no_logprobs"
    try:
        if _text_of(choice.logprobs) != choice.content:
            return "text_not_its_tokens"
        if any(len(entry["top_logprobs"]) < TOP_LOGPROBS for entry in choice.logprobs):
            return "top_logprobs_too_few"
    except (AttributeError, KeyError, TypeError, ValueError):
        return "malformed_logprobs"
    return None


def verify_body(payload: Payload, record: inference_pb2.Inference, threshold_ppm: int) -> dict[str, Any]:
    """The ``/v1/verify`` body re-executing a payload ``answer_problem`` passed: the request's messages and sampling
    as its requester signed them, the model, max_tokens and seed the chain escrowed (those the executor's node was
    held to), the answer's finish reason and its logprobs, each list cut to ``TOP_LOGPROBS``, and the model's
    threshold on chain (``threshold_ppm``, as the node's [0, 1] float), so the node's match is the one x/poc
    accepts; ValueError when the body is no chat request."""
    request = json.loads(payload.body)
    if not isinstance(request, dict):
        raise ValueError("the body is not a JSON object")
    choice = payload.answer.choices[0]
    body: dict[str, Any] = {
        "model": record.model,
        "messages": request.get("messages"),
        "max_tokens": record.max_tokens,
        "seed": record.seed,
        "finish_reason": choice.finish_reason,
        "threshold": threshold_ppm / PPM,
        "logprobs": [
            {**entry, "top_logprobs": entry["top_logprobs"][:TOP_LOGPROBS]} for entry in choice.logprobs or []
        ],
    }
    body.update((key, request[key]) for key in SAMPLING if request.get(key) is not None)
    return body
