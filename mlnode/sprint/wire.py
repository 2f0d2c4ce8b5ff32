"""JSON bodies of the Sprint routes: bytes as hex strings, distances as fixed-point integers.

Validation here is the routes' input checking: bad hex, wrong lengths, negative or oversized ranges
and malformed proofs are rejected before any work starts.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from mlnode.sprint.commitment import Commitment, Opening
from mlnode.sprint.derive import PUBKEY_BYTES, SEED_BYTES, check_pubkey
from mlnode.sprint.merkle import Node
from mlnode.sprint.params import RaceParams
from mlnode.sprint.proof import U64_MAX, Proof
from mlnode.sprint.verifier import RaceVerdict

MAX_NONCE_COUNT = 1 << 16
"""Nonces per /run request: about 80 s of the default race on one core of the 2-core dev VM (≈800/s)."""
MAX_PROOFS = 1 << 20
MAX_PATH = 64
MAX_RANDOMNESS_BYTES = 64


def _from_hex(value: Any) -> Any:
    if isinstance(value, str):
        if not re.fullmatch(r"(?:[0-9a-fA-F]{2})*", value):
            raise ValueError("must be a hex string of whole bytes")
        return bytes.fromhex(value)
    return value


HexBytes = Annotated[
    bytes,
    BeforeValidator(_from_hex),
    PlainSerializer(bytes.hex, return_type=str),
    WithJsonSchema({"type": "string", "pattern": "^([0-9a-fA-F]{2})*$"}),
]
Hash = Annotated[HexBytes, Field(min_length=32, max_length=32)]
Seed = Annotated[HexBytes, Field(min_length=SEED_BYTES, max_length=SEED_BYTES)]
PubKey = Annotated[HexBytes, Field(min_length=PUBKEY_BYTES, max_length=PUBKEY_BYTES), AfterValidator(check_pubkey)]
Randomness = Annotated[HexBytes, Field(min_length=1, max_length=MAX_RANDOMNESS_BYTES)]
U64 = Annotated[int, Field(ge=0, le=U64_MAX)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProofBody(Body):
    nonce: U64
    distance: U64

    def proof(self) -> Proof:
        return Proof(self.nonce, self.distance)


class NodeBody(Body):
    hash: Hash
    lo: U64
    hi: U64


class OpeningBody(ProofBody):
    index: U64
    path: list[NodeBody] = Field(max_length=MAX_PATH)

    @classmethod
    def of(cls, opening: Opening) -> OpeningBody:
        return cls(
            index=opening.index,
            nonce=opening.proof.nonce,
            distance=opening.proof.distance,
            path=[NodeBody(hash=node.hash, lo=node.lo, hi=node.hi) for node in opening.path],
        )

    def opening(self) -> Opening:
        return Opening(self.index, self.proof(), tuple(Node(node.hash, node.lo, node.hi) for node in self.path))


class CommitmentBody(Body):
    root: Hash
    count: U64
    r_target: U64
    seed: Seed
    pubkey: PubKey

    @classmethod
    def of(cls, commitment: Commitment) -> CommitmentBody:
        return cls(
            root=commitment.root,
            count=commitment.count,
            r_target=commitment.r_target,
            seed=commitment.seed,
            pubkey=commitment.pubkey,
        )

    def commitment(self) -> Commitment:
        return Commitment(self.root, self.count, self.r_target, self.seed, self.pubkey)


class RunRequest(Body):
    seed: Seed
    pubkey: PubKey
    nonce_start: U64
    nonce_count: int = Field(ge=1, le=MAX_NONCE_COUNT)

    @field_validator("nonce_count")
    @classmethod
    def _range_fits(cls, count: int, info: ValidationInfo) -> int:
        if info.data.get("nonce_start", 0) + count - 1 > U64_MAX:
            raise ValueError("nonce_start + nonce_count - 1 exceeds the u64 range")
        return count


class RunResponse(Body):
    commitment: CommitmentBody
    proofs: list[ProofBody]


class VerifyRequest(Body):
    """A commitment and the randomness that samples it, with either the full proof list or the
    openings of the sampled leaves."""

    commitment: CommitmentBody
    randomness: Randomness
    proofs: list[ProofBody] | None = Field(None, max_length=MAX_PROOFS)
    openings: list[OpeningBody] | None = Field(None, max_length=MAX_PROOFS)

    @model_validator(mode="after")
    def _one_evidence(self) -> VerifyRequest:
        if (self.proofs is None) == (self.openings is None):
            raise ValueError("give exactly one of proofs or openings")
        return self


class VerifyResponse(Body):
    fraud: bool
    failures: int
    samples: int
    threshold: int
    reason: str

    @classmethod
    def of(cls, verdict: RaceVerdict) -> VerifyResponse:
        return cls(
            fraud=verdict.fraud,
            failures=verdict.failures,
            samples=verdict.samples,
            threshold=verdict.threshold,
            reason=verdict.reason,
        )


class OpenRequest(Body):
    """A commitment with the full proof list behind it, and the randomness that samples it: the host
    keeps its proofs and asks its node for the openings a verifier will check."""

    commitment: CommitmentBody
    randomness: Randomness
    proofs: list[ProofBody] = Field(max_length=MAX_PROOFS)


class OpenResponse(Body):
    openings: list[OpeningBody]


class ParamsResponse(Body):
    """What a host needs to know of its node's race: the params, their hash, and the verifier's plan."""

    preset: str | None
    params: RaceParams
    params_hash: Hash
    r_target: int
    samples: int
    threshold: int
