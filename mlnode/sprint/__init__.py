"""Sprint (Transformer PoW 2.0): the race a node runs on an epoch seed, its Merkle commitment, and the
sampling verifier that catches invalid proofs. See README.md for the protocol and its parameters."""

from mlnode.sprint.binomial import SamplePlan, plan_samples
from mlnode.sprint.commitment import Commitment, Opening, commit, respond
from mlnode.sprint.params import RaceParams
from mlnode.sprint.proof import DISTANCE_SCALE, Proof
from mlnode.sprint.race import RaceModel, distances, run_race
from mlnode.sprint.verifier import RaceVerdict, VerifyPolicy, verify, verify_proofs

__all__ = [
    "DISTANCE_SCALE",
    "Commitment",
    "Opening",
    "Proof",
    "RaceModel",
    "RaceParams",
    "SamplePlan",
    "RaceVerdict",
    "VerifyPolicy",
    "commit",
    "distances",
    "plan_samples",
    "respond",
    "run_race",
    "verify",
    "verify_proofs",
]
