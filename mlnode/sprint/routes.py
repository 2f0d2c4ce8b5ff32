"""HTTP routes of the Sprint race: run a nonce range and commit, verify a commitment by sampling.

Both are CPU-bound, so they run in the thread pool. Bad input is answered 400 with an OpenAI-style
error body by the app's error handlers (``mlnode.server.install_error_handlers``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from mlnode.sprint.commitment import commit
from mlnode.sprint.params import RaceParams
from mlnode.sprint.race import RaceModel, run_race
from mlnode.sprint.verifier import VerifyPolicy, verify, verify_proofs
from mlnode.sprint.wire import CommitmentBody, ProofBody, RunRequest, RunResponse, VerifyRequest, VerifyResponse

RACE_CACHE_SIZE = 4
"""Race models kept built (one per recent epoch seed)."""

RaceSource = Callable[[bytes], RaceModel]


def race_and_commit(races: RaceSource, body: RunRequest) -> RunResponse:
    race = races(body.seed)
    proofs = run_race(race, body.pubkey, body.nonce_start, body.nonce_count)
    commitment, _ = commit(proofs, race.r_target, body.seed, body.pubkey)
    return RunResponse(
        commitment=CommitmentBody.of(commitment),
        proofs=[ProofBody(nonce=proof.nonce, distance=proof.distance) for proof in proofs],
    )


def judge(races: RaceSource, policy: VerifyPolicy, body: VerifyRequest) -> VerifyResponse:
    race, commitment = races(body.commitment.seed), body.commitment.commitment()
    if body.proofs is not None:
        proofs = [proof.proof() for proof in body.proofs]
        return VerifyResponse.of(verify_proofs(commitment, body.randomness, proofs, race, policy))
    openings = [opening.opening() for opening in body.openings or []]
    return VerifyResponse.of(verify(commitment, body.randomness, openings, race, policy))


def sprint_router(params: RaceParams = RaceParams(), policy: VerifyPolicy = VerifyPolicy()) -> APIRouter:
    """``POST /v1/sprint/run`` and ``POST /v1/sprint/verify`` for one race configuration."""
    router = APIRouter(tags=["sprint"])
    races: RaceSource = lru_cache(maxsize=RACE_CACHE_SIZE)(partial(RaceModel.build, params))

    @router.post("/v1/sprint/run")
    async def run(body: RunRequest) -> RunResponse:
        return await run_in_threadpool(race_and_commit, races, body)

    @router.post("/v1/sprint/verify")
    async def verify_commitment(body: VerifyRequest) -> VerifyResponse:
        return await run_in_threadpool(judge, races, policy, body)

    return router
