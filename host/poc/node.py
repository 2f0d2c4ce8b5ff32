"""``VerifyNode``: the host's own ML node's ``POST /v1/verify`` (mlnode/VERIFY.md), over HTTP, since the host's
program never imports ``mlnode``: the teacher-forced re-execution of an answer, its verdict and score."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Reexecution:
    """What the node found: ``match``, the similarity ``score`` in [0, 1], and its reason codes."""

    match: bool
    score: float
    reasons: tuple[str, ...]


class Refused(Exception):
    """The node refused the answer as one no generator could have produced in that form (400): the executor's
    claim is malformed."""


class NodeFailed(Exception):
    """The node did not answer, or failed (not the answer's fault): judged again later."""


class VerifyNode:
    """A blocking client of the host's ML node's ``/v1/verify`` (the duty runs on its own thread); ``upstream``
    names another node for a model it serves (a fetched model's own, ``host.models.ModelFollower.upstream``)."""

    def __init__(self, url: str, timeout_s: float, upstream: Callable[[str], str | None] | None = None) -> None:
        self.client = httpx.Client(base_url=url, timeout=timeout_s)
        self.upstream = upstream

    def close(self) -> None:
        self.client.close()

    def verify(self, body: dict[str, Any]) -> Reexecution:
        """``Refused`` for a 400, ``NodeFailed`` for no answer or any other refusal (an unknown model included)."""
        other = None if self.upstream is None else self.upstream(str(body.get("model", "")))
        try:
            response = self.client.post("/v1/verify" if other is None else f"{other.rstrip('/')}/v1/verify", json=body)
        except httpx.HTTPError as error:
            raise NodeFailed(f"the ML node did not answer /v1/verify: {error!r}") from None
        if response.status_code == 400:
            raise Refused(response.text[:300])
        if response.status_code != 200:
            raise NodeFailed(f"the ML node refused /v1/verify: {response.status_code} {response.text[:300]}")
        try:
            got = response.json()
            return Reexecution(bool(got["match"]), float(got["score"]), tuple(got.get("reasons") or ()))
        except (ValueError, KeyError, TypeError) as error:
            raise NodeFailed(f"the ML node's /v1/verify answer does not parse: {error!r}") from None
