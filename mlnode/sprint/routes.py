"""HTTP routes of the Sprint race: describe the race, run a nonce range and commit, open the leaves a
challenge samples, verify a commitment by sampling.

Run, open and verify are CPU-bound, so they run in the thread pool. Bad input is answered 400 with an
OpenAI-style error body by the app's error handlers (``mlnode.server.install_error_handlers``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache, partial

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from mlnode.errors import invalid_request
from mlnode.sprint.calibration import r_target
from mlnode.sprint.commitment import commit, respond
from mlnode.sprint.merkle import MerkleTree
from mlnode.sprint.params import RaceParams, race_params_hash
from mlnode.sprint.race import RaceModel, run_race
from mlnode.sprint.verifier import VerifyPolicy, verify, verify_proofs
from mlnode.sprint.wire import (
    CommitmentBody,
    OpeningBody,
    OpenRequest,
    OpenResponse,
    ParamsResponse,
    ProofBody,
    RunRequest,
    RunResponse,
    VerifyRequest,
    VerifyResponse,
)

RACE_CACHE_SIZE = 4
"""Race models kept built (one per recent epoch seed)."""

RaceSource = Callable[[bytes], RaceModel]


def describe(params: RaceParams, policy: VerifyPolicy, preset: str | None) -> ParamsResponse:
    plan = policy.plan
    return ParamsResponse(
        preset=preset,
        params=params,
        params_hash=race_params_hash(params),
        r_target=r_target(params.transformer.dim, params.target_rate),
        samples=plan.samples,
        threshold=plan.threshold,
    )


def race_and_commit(races: RaceSource, body: RunRequest) -> RunResponse:
    race = races(body.seed)
    proofs = run_race(race, body.pubkey, body.nonce_start, body.nonce_count)
    commitment, _ = commit(proofs, race.r_target, body.seed, body.pubkey)
    return RunResponse(
        commitment=CommitmentBody.of(commitment),
        proofs=[ProofBody(nonce=proof.nonce, distance=proof.distance) for proof in proofs],
    )


def open_leaves(policy: VerifyPolicy, body: OpenRequest) -> OpenResponse:
    """The prover's answer to a challenge, from the proofs it committed to: exactly what ``verify`` samples.
    Needs no race model: the tree alone decides which leaves and paths to send."""
    tree = MerkleTree.build([proof.proof() for proof in body.proofs])
    if tree.root != body.commitment.root or len(tree.leaves) != body.commitment.count:
        raise invalid_request("proofs do not rebuild the committed root and count", "proofs")
    openings = respond(tree, body.randomness, policy.plan.samples)
    return OpenResponse(openings=[OpeningBody.of(opening) for opening in openings])


def judge(races: RaceSource, policy: VerifyPolicy, body: VerifyRequest) -> VerifyResponse:
    race, commitment = races(body.commitment.seed), body.commitment.commitment()
    if body.proofs is not None:
        proofs = [proof.proof() for proof in body.proofs]
        return VerifyResponse.of(verify_proofs(commitment, body.randomness, proofs, race, policy))
    openings = [opening.opening() for opening in body.openings or []]
    return VerifyResponse.of(verify(commitment, body.randomness, openings, race, policy))


def sprint_router(
    params: RaceParams = RaceParams(), policy: VerifyPolicy = VerifyPolicy(), preset: str | None = None
) -> APIRouter:
    """``GET /v1/sprint/params`` and ``POST /v1/sprint/{run,open,verify}`` for one race configuration;
    ``preset`` is the name ``params`` were chosen by, reported by ``/params``."""
    router = APIRouter(tags=["sprint"])
    races: RaceSource = lru_cache(maxsize=RACE_CACHE_SIZE)(partial(RaceModel.build, params))
    description = cache(partial(describe, params, policy, preset))

    @router.get("/v1/sprint/params")
    async def race_params() -> ParamsResponse:
        return await run_in_threadpool(description)

    @router.post("/v1/sprint/run")
    async def run(body: RunRequest) -> RunResponse:
        return await run_in_threadpool(race_and_commit, races, body)

    @router.post("/v1/sprint/open")
    async def open_commitment(body: OpenRequest) -> OpenResponse:
        return await run_in_threadpool(open_leaves, policy, body)

    @router.post("/v1/sprint/verify")
    async def verify_commitment(body: VerifyRequest) -> VerifyResponse:
        return await run_in_threadpool(judge, races, policy, body)

    return router
