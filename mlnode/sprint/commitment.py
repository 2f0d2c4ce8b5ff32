"""What a node publishes after the race, and how it answers a verifier's challenge.

The commitment (root, count, r_target, seed, pubkey) is small enough for the chain; the proofs stay
with the node, which later opens only the leaves the challenge samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlnode.sprint.challenge import sample_indices
from mlnode.sprint.merkle import MerkleTree, Node
from mlnode.sprint.proof import Proof


@dataclass(frozen=True)
class Commitment:
    root: bytes
    count: int
    r_target: int
    seed: bytes
    pubkey: bytes


@dataclass(frozen=True)
class Opening:
    """One leaf with its Merkle path."""

    index: int
    proof: Proof
    path: tuple[Node, ...]


def commit(proofs: Sequence[Proof], r_target: int, seed: bytes, pubkey: bytes) -> tuple[Commitment, MerkleTree]:
    """An honest commitment: nonces strictly increasing, every distance under r_target."""
    if any(a.nonce >= b.nonce for a, b in zip(proofs, proofs[1:])):
        raise ValueError("proofs must be strictly increasing by nonce")
    if any(proof.distance >= r_target for proof in proofs):
        raise ValueError("every proof's distance must be under r_target")
    tree = MerkleTree.build(proofs)
    return Commitment(tree.root, len(proofs), r_target, seed, pubkey), tree


def respond(tree: MerkleTree, randomness: bytes, samples: int) -> list[Opening]:
    """The prover's answer to a challenge: every leaf the verifier will sample, opened once."""
    indices = sorted(set(sample_indices(tree.root, randomness, len(tree.leaves), samples)))
    return [Opening(index, tree.leaves[index], tree.path(index)) for index in indices]
