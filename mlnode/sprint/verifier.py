"""Verification of a commitment by sampling: Merkle paths, global nonce order, recomputed distances.

A sampled leaf passes when its path leads to the root with every interval in order (merkle.py), its
claimed distance is under r_target, and the distance recomputed from the seed, the commitment's key
and the nonce agrees within ``tolerance`` and is under r_target + tolerance. Passing leaves form a
strictly increasing run of real proofs of this key, so a commitment with invalid share f fails each
sample with probability ≥ f; the binomial plan (binomial.py) turns failures into a verdict. Every
verification recomputes its own sampled nonces, in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from mlnode.sprint.binomial import SamplePlan, plan_samples
from mlnode.sprint.challenge import sample_indices
from mlnode.sprint.commitment import Commitment, Opening, respond
from mlnode.sprint.merkle import MerkleTree, path_holds
from mlnode.sprint.proof import Proof
from mlnode.sprint.race import RaceModel, distances


@dataclass(frozen=True)
class VerifyPolicy:
    honest_mismatch: Fraction = Fraction(1, 100)
    """p0: share of leaves an honest node may fail through float drift on other hardware."""
    false_flag: Fraction = Fraction(1, 10**6)
    """α: highest allowed chance of flagging an honest node."""
    min_invalid_share: Fraction = Fraction(1, 5)
    """f: the smallest invalid share the plan guarantees to catch."""
    max_miss: Fraction = Fraction(1, 10**5)
    """β: highest allowed chance of missing a node with invalid share f."""
    tolerance: int = 10_000
    """Allowed |recomputed − claimed| in fixed-point units (1e-5 of distance)."""

    @property
    def plan(self) -> SamplePlan:
        return plan_samples(self.honest_mismatch, self.false_flag, self.min_invalid_share, self.max_miss)


@dataclass(frozen=True)
class RaceVerdict:
    samples: int
    failures: int
    threshold: int
    fraud: bool
    reason: str = ""


def commitment_problem(commitment: Commitment, race: RaceModel) -> str:
    """Why a commitment cannot be verified against this race at all ('' when it can)."""
    if commitment.seed != race.seed:
        return "commitment seed differs from the race seed"
    if commitment.r_target != race.r_target:
        return f"commitment r_target {commitment.r_target} differs from the race's {race.r_target}"
    return ""


def leaf_passes(proof: Proof, recomputed: int, r_target: int, tolerance: int) -> bool:
    return (
        proof.distance < r_target
        and abs(recomputed - proof.distance) <= tolerance
        and recomputed < r_target + tolerance
    )


def proven_leaves(commitment: Commitment, indices: Sequence[int], openings: Sequence[Opening]) -> dict[int, Proof]:
    """The sampled leaves whose opening's path holds; a missing opening counts as a failed path."""
    by_index = {opening.index: opening for opening in openings}
    return {
        index: by_index[index].proof
        for index in sorted(set(indices))
        if index in by_index
        and path_holds(commitment.root, commitment.count, index, by_index[index].proof, by_index[index].path)
    }


def verify(
    commitment: Commitment,
    randomness: bytes,
    openings: Sequence[Opening],
    race: RaceModel,
    policy: VerifyPolicy = VerifyPolicy(),
) -> RaceVerdict:
    """Sample, check paths, recompute the proven leaves in batches, count failures against k*."""
    plan = policy.plan
    problem = commitment_problem(commitment, race)
    if problem:
        return RaceVerdict(0, 0, plan.threshold, True, problem)
    indices = sample_indices(commitment.root, randomness, commitment.count, plan.samples)
    proven = proven_leaves(commitment, indices, openings)
    recomputed = dict(zip(proven, distances(race, commitment.pubkey, [proof.nonce for proof in proven.values()])))
    failures = sum(
        1
        for index in indices
        if index not in proven or not leaf_passes(proven[index], recomputed[index], race.r_target, policy.tolerance)
    )
    fraud = failures >= plan.threshold
    return RaceVerdict(
        len(indices),
        failures,
        plan.threshold,
        fraud,
        f"{failures} of {len(indices)} sampled leaves failed" if fraud else "",
    )


def verify_proofs(
    commitment: Commitment,
    randomness: bytes,
    proofs: Sequence[Proof],
    race: RaceModel,
    policy: VerifyPolicy = VerifyPolicy(),
) -> RaceVerdict:
    """Verification from the full proof list: it must rebuild the committed root, then sampling as usual."""
    tree = MerkleTree.build(proofs)
    if tree.root != commitment.root or len(proofs) != commitment.count:
        return RaceVerdict(0, 0, policy.plan.threshold, True, "proofs do not rebuild the committed root and count")
    return verify(commitment, randomness, respond(tree, randomness, policy.plan.samples), race, policy)
