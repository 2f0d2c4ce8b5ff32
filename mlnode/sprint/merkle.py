"""An interval Merkle tree over proofs in nonce order.

Every node carries the nonce interval [lo, hi] of its subtree next to its hash, and an inner node's hash
covers both children's intervals. Walking one leaf's path, the verifier checks at every inner node that
the left interval ends strictly below the right one's start. The leaves whose paths pass form a strictly
increasing sequence: for two of them, their lowest common ancestor is one node on both paths (same hash,
so same preimage), and its check orders them. So one path proves a leaf's place in the global order, and
a list that repeats or misorders nonces fails at every leaf outside its longest increasing run — a
neighbour-only check would pass a whole list repeated twice, since only its middle pair is out of order.

Odd rule: the last node of an odd level is promoted unchanged to the next level; it is never paired
with a copy of itself, so no two different leaf lists share a root.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mlnode.sprint.proof import Proof, leaf_hash

NODE_TAG = b"\x01gonka/sprint/v1/node"
NODE_LAYOUT = struct.Struct(">32sQQ32sQQ")
EMPTY_ROOT = hashlib.sha256(b"\x02gonka/sprint/v1/empty").digest()
"""Root of a commitment with no proofs."""


class Node(NamedTuple):
    hash: bytes
    lo: int
    hi: int


def leaf_node(proof: Proof) -> Node:
    return Node(leaf_hash(proof), proof.nonce, proof.nonce)


def parent(left: Node, right: Node) -> Node:
    """SHA-256(NODE_TAG || left.hash || left.lo || left.hi || right.hash || right.lo || right.hi)."""
    return Node(hashlib.sha256(NODE_TAG + NODE_LAYOUT.pack(*left, *right)).digest(), left.lo, right.hi)


def next_level(level: Sequence[Node]) -> tuple[Node, ...]:
    pairs = [parent(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
    return tuple(pairs + [level[-1]] if len(level) % 2 else pairs)


@dataclass(frozen=True)
class MerkleTree:
    leaves: tuple[Proof, ...]
    levels: tuple[tuple[Node, ...], ...]
    """levels[0] holds the leaves' nodes, levels[-1] the root alone."""

    @classmethod
    def build(cls, leaves: Sequence[Proof]) -> MerkleTree:
        """Any list builds a tree, a dishonest one too: only verification judges the order."""
        level = tuple(leaf_node(proof) for proof in leaves)
        levels = [level]
        while len(level) > 1:
            level = next_level(level)
            levels.append(level)
        return cls(tuple(leaves), tuple(levels))

    @property
    def root(self) -> bytes:
        return self.levels[-1][0].hash if self.leaves else EMPTY_ROOT

    def path(self, index: int) -> tuple[Node, ...]:
        """Siblings from the leaf up; a level where the node is promoted contributes none."""
        siblings = []
        for level in self.levels[:-1]:
            if index ^ 1 < len(level):
                siblings.append(level[index ^ 1])
            index //= 2
        return tuple(siblings)


def path_holds(root: bytes, count: int, index: int, proof: Proof, path: Sequence[Node]) -> bool:
    """Recompute the root from one leaf and its siblings, checking the interval order at every inner node."""
    if not 0 <= index < count:
        return False
    node, width, siblings = leaf_node(proof), count, iter(path)
    while width > 1:
        if index ^ 1 < width:
            sibling = next(siblings, None)
            if sibling is None or sibling.lo > sibling.hi:
                return False
            left, right = (sibling, node) if index & 1 else (node, sibling)
            if left.hi >= right.lo:
                return False
            node = parent(left, right)
        index, width = index // 2, (width + 1) // 2
    return next(siblings, None) is None and node.hash == root
