"""``Openings``: ``GET /v1/sprint/openings?epoch=E&validator=ADDR`` on the executor proxy (the host's registered
URL): the leaves of this host's commitment of E that ``validator`` samples, opened by the host's ML node from the
proofs it committed and the pair randomness (``x.sprint.client.randomness``). Only once the chain fixed the
epoch's sample randomness; cached per (epoch, validator)."""

from __future__ import annotations

import threading
from typing import Any

from host.sprint.chain import SprintChain
from host.sprint.config import SprintConfig
from host.sprint.counts import SprintCounts
from host.sprint.faults import committed_list
from host.sprint.node import NodeError, RaceNode
from host.sprint.race import RaceDuty
from sdk.client.rpc import RPCError
from sdk.crypto import bech32
from sdk.http.errors import ApiError, bad_request
from x.sprint.client.randomness import pair_randomness

CACHED = 1024
"""(epoch, validator) answers kept; a validator asks once or a few times per epoch."""


def parse_query(query: dict[str, list[str]]) -> tuple[int, str]:
    """(epoch, validator) from the query string; 400 with the parameter's name when one is missing or malformed."""
    epoch_text = (query.get("epoch") or [""])[0]
    if not epoch_text.isdigit() or not 0 < int(epoch_text) < 1 << 63:
        raise bad_request(f"epoch must be a positive whole number, not {epoch_text!r}", "epoch")
    validator = (query.get("validator") or [""])[0]
    try:
        bech32.decode(validator)
    except ValueError as error:
        raise bad_request(str(error), "validator") from None
    return int(epoch_text), validator


class Openings:
    """What the openings route answers; blocking (the chain and the ML node): the proxy runs it on a thread."""

    def __init__(self, chain: SprintChain, node: RaceNode, race: RaceDuty, config: SprintConfig, counts: SprintCounts):
        self.chain, self.node, self.race, self.config, self.counts = chain, node, race, config, counts
        self.cache: dict[tuple[int, str], list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def serve(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``{"openings": [...]}``; ``ApiError`` 400 (bad query), 404 (no commitment of this host in the epoch),
        409 (the epoch's randomness not fixed yet), 502 (the ML node failed)."""
        epoch, validator = parse_query(query)
        with self.lock:
            cached = self.cache.get((epoch, validator))
        if cached is None:
            try:
                cached = self._open(epoch, validator)
            except RPCError as error:
                raise ApiError(
                    503, f"The host's chain node did not answer: {error}", "server_error", "chain_unavailable"
                ) from None
            with self.lock:
                if len(self.cache) >= CACHED:
                    self.cache.pop(next(iter(self.cache)))
                self.cache[(epoch, validator)] = cached
        self.counts.openings_served += 1
        return {"openings": cached}

    def _open(self, epoch: int, validator: str) -> list[dict[str, Any]]:
        own = self.chain.own_commitment(epoch)
        found = self.race.committed(epoch, own.root) if own is not None else None
        if found is None:
            raise ApiError(404, f"This host has no commitment of epoch {epoch}.", code="no_commitment")
        randomness = self.chain.race(epoch).randomness
        if not randomness:
            raise ApiError(
                409, f"The chain has not fixed epoch {epoch}'s sample randomness yet.", code="randomness_not_fixed"
            )
        race, entry = found
        try:
            r_target = self.node.race().r_target
            listed = committed_list(race.proofs[: entry.real], self.config.fault, r_target)
            commitment = self.node.commit(bytes.fromhex(race.seed), bytes.fromhex(race.pubkey), listed)
            if commitment["root"] != entry.root:
                raise NodeError(f"the journalled proofs rebuild root {commitment['root']}, not {entry.root}")
            return self.node.open(commitment, pair_randomness(randomness, validator, self.chain.address), listed)
        except NodeError as error:
            raise ApiError(
                502, f"The ML node did not open the leaves: {error}", "server_error", "upstream_failed"
            ) from None
