"""``RaceNode``: the host's own ML node's Sprint routes (mlnode/sprint/README.md, HTTP), over HTTP, since the
host's program never imports ``mlnode``: the race's params and hash, nonce chunks, the root of a whole proof list,
openings and verdicts. Bytes travel as hex, distances as fixed-point integers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx


class Proof(NamedTuple):
    """A nonce whose distance is under r_target (fixed point, 10⁻⁹)."""

    nonce: int
    distance: int

    def body(self) -> dict[str, int]:
        return {"nonce": self.nonce, "distance": self.distance}


@dataclass(frozen=True)
class NodeRace:
    """What ``GET /v1/sprint/params`` says of the node's race."""

    params_hash: bytes
    r_target: int
    samples: int
    threshold: int


@dataclass(frozen=True)
class Verdict:
    fraud: bool
    failures: int
    samples: int
    threshold: int
    reason: str


class NodeError(Exception):
    """The ML node refused (``status``, its error message) or did not answer (``status`` None)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RaceNode:
    """A blocking client of one ML node's Sprint routes (the duties run on the follower's thread)."""

    def __init__(self, url: str, timeout_s: float = 120.0) -> None:
        self.client = httpx.Client(base_url=url, timeout=timeout_s)

    def close(self) -> None:
        self.client.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self.client.request(method, path, json=body)
        except httpx.HTTPError as error:
            raise NodeError(f"the ML node did not answer {path}: {error!r}") from None
        if response.status_code != 200:
            raise NodeError(
                f"the ML node refused {path}: {response.status_code} {response.text[:300]}", response.status_code
            )
        return dict(response.json())

    def race(self) -> NodeRace:
        got = self._call("GET", "/v1/sprint/params")
        return NodeRace(bytes.fromhex(got["params_hash"]), got["r_target"], got["samples"], got["threshold"])

    def run(self, seed: bytes, pubkey: bytes, start: int, count: int) -> list[Proof]:
        body = {"seed": seed.hex(), "pubkey": pubkey.hex(), "nonce_start": start, "nonce_count": count}
        return [Proof(p["nonce"], p["distance"]) for p in self._call("POST", "/v1/sprint/run", body)["proofs"]]

    def commit(self, seed: bytes, pubkey: bytes, proofs: list[Proof]) -> dict[str, Any]:
        """The commitment body ``{root, count, r_target, seed, pubkey}`` of the whole list."""
        body = {"seed": seed.hex(), "pubkey": pubkey.hex(), "proofs": [proof.body() for proof in proofs]}
        return dict(self._call("POST", "/v1/sprint/commit", body)["commitment"])

    def open(self, commitment: dict[str, Any], randomness: bytes, proofs: list[Proof]) -> list[dict[str, Any]]:
        body = {"commitment": commitment, "randomness": randomness.hex(), "proofs": [p.body() for p in proofs]}
        return list(self._call("POST", "/v1/sprint/open", body)["openings"])

    def verify(self, commitment: dict[str, Any], randomness: bytes, openings: list[Any]) -> Verdict:
        body = {"commitment": commitment, "randomness": randomness.hex(), "openings": openings}
        got = self._call("POST", "/v1/sprint/verify", body)
        return Verdict(got["fraud"], got["failures"], got["samples"], got["threshold"], got["reason"])
