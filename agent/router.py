"""Routing: which ML node gets a request.

Capable nodes serve the model and have the memory it needs (``Model.memory_bytes``, 0 = any). Among the live
capable nodes with room, the least loaded wins: load = in flight / max_concurrency, where in flight is what
this TA has sent there and not yet finished (counted locally, exact) plus what the node reported beyond that
at its last ``/v1/node/info`` poll (other TAs' requests). Ties go to the higher epoch weight, then the lower
operator address, then the node id.

A node that fails a poll or a connection is dead at once and skipped until a poll answers again; the poller
asks every node every ``poll_interval_s`` and re-reads the chain's registry (models, nodes) as it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent.chain import Model, Node
from sdk.http.upstream import Pool


class NoCapableNode(Exception):
    pass


class NodeState:
    def __init__(self, node: Node, pool: Pool) -> None:
        self.node = node
        self.pool = pool
        self.alive = True
        self.local = 0
        """Requests this TA has in flight on the node."""
        self.external = 0
        """In flight on the node beyond this TA's own, at the last poll."""
        self.capacity = max(1, node.max_concurrency)
        self.failures = 0
        self.last_error = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.node.operator, self.node.node_id

    @property
    def in_flight(self) -> int:
        return self.local + self.external

    def has_room(self) -> bool:
        return self.alive and self.local + self.external < self.capacity

    def rank(self) -> tuple[float, int, str, str]:
        return (self.local + self.external) / self.capacity, -self.node.weight, self.node.operator, self.node.node_id

    def describe(self) -> dict[str, object]:
        node = self.node
        return {
            "operator": node.operator,
            "node_id": node.node_id,
            "url": node.url,
            "models": list(node.models),
            "weight": node.weight,
            "memory_bytes": node.memory_bytes,
            "max_concurrency": self.capacity,
            "state": "alive" if self.alive else "dead",
            "in_flight": self.local,
            "external_in_flight": self.external,
            "failures": self.failures,
            "last_error": self.last_error,
        }


class Router:
    def __init__(self, pool_factory: Callable[[str], Pool]) -> None:
        self.pool_factory = pool_factory
        self.models: dict[str, Model] = {}
        self.nodes: dict[tuple[str, str], NodeState] = {}
        self.by_model: dict[str, list[NodeState]] = {}

    def update(self, models: Iterable[Model], nodes_of: Callable[[str], list[Node]]) -> None:
        """Take the chain's registry; a node already known keeps its state (load, liveness, connections)."""
        self.models = {model.id: model for model in models}
        by_model: dict[str, list[NodeState]] = {}
        seen: dict[tuple[str, str], NodeState] = {}
        for model in self.models.values():
            for node in nodes_of(model.id):
                if model.id not in node.models or node.memory_bytes < model.memory_bytes:
                    continue
                key = (node.operator, node.node_id)
                state = seen.get(key) or self.nodes.get(key)
                if state is None or state.node.url != node.url:
                    if state is not None:
                        state.pool.close()
                    state = NodeState(node, self.pool_factory(node.url))
                elif state.node != node:
                    state.node = node
                    state.capacity = max(1, node.max_concurrency)
                seen[key] = state
                by_model.setdefault(model.id, []).append(state)
        for key, state in self.nodes.items():
            if key not in seen:
                state.pool.close()
        self.nodes = seen
        self.by_model = by_model

    def pick(self, model: str, exclude: frozenset[tuple[str, str]] = frozenset()) -> NodeState | None:
        """The node to send to now, or None when every live capable node is full; ``NoCapableNode`` when no
        live node can serve the model at all."""
        best: NodeState | None = None
        best_rank = None
        live = False
        for state in self.by_model.get(model, ()):
            if not state.alive or (exclude and state.key in exclude):
                continue
            live = True
            if state.local + state.external >= state.capacity:
                continue
            rank = state.rank()
            if best_rank is None or rank < best_rank:
                best, best_rank = state, rank
        if not live:
            raise NoCapableNode(model)
        return best

    def mark_dead(self, state: NodeState, reason: str) -> None:
        state.alive = False
        state.failures += 1
        state.last_error = reason
        state.pool.close()

    def observe(self, state: NodeState, info: dict[str, object]) -> None:
        """A successful poll of ``/v1/node/info``."""
        load = info.get("load")
        if isinstance(load, dict):
            in_flight = load.get("in_flight")
            if isinstance(in_flight, int):
                state.external = max(0, in_flight - state.local)
            limit = load.get("max_concurrency")
            if isinstance(limit, int) and limit > 0:
                state.capacity = max(1, min(state.node.max_concurrency, limit))
        state.alive = True
        state.last_error = ""
