"""Verification of an OpenAI-shaped chat answer: the request a node was given, the logprobs it returned
(``choices[0].logprobs.content``) and its finish reason, read back into token ids for ``verify``;
served as ``POST /v1/verify`` by a node with a local model."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from mlnode import schemas
from mlnode.errors import invalid_request, model_not_found
from mlnode.generate import TokenLogprob
from mlnode.sampling import SamplingParams
from mlnode.tokenizer import chat_prompt, token_from_bytes
from mlnode.verify import Answer, Tolerances, verify
from mlnode.weights import LoadedModel


class VerifyRequest(BaseModel):
    """The executed request's parameters as the executor applied them (its reported seed, the
    max_tokens it used) and its answer."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """The verifier's model name or its ``name@sha256:…`` identity."""
    messages: list[schemas.ChatMessage] = Field(min_length=1)
    max_tokens: int = Field(ge=1)
    temperature: float = Field(1.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int = Field(0, ge=-schemas.SEED_BOUND, lt=schemas.SEED_BOUND)
    stop: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=schemas.MAX_STOP_SEQUENCES)] = []
    finish_reason: str
    logprobs: list[schemas.TokenLogprob]
    """``choices[0].logprobs.content`` of the answer: one entry per output token."""

    @field_validator("stop", mode="before")
    @classmethod
    def _one_stop(cls, value: object) -> object:
        """A single string is one stop sequence, as in the chat request."""
        return [value] if isinstance(value, str) else value


class VerifyResult(BaseModel):
    model: str
    """Identity of the weights the answer was re-executed with."""
    match: bool
    score: float
    token_agreement: float
    max_logprob_error: float
    mean_logprob_error: float
    reasons: list[str]
    failed_positions: list[int]


def _token(entry: schemas.TopLogprob, where: str) -> int:
    try:
        return token_from_bytes(entry.bytes or [], entry.token)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _claim(index: int, entry: schemas.TokenLogprob) -> TokenLogprob:
    where = f"logprobs[{index}]"
    top = tuple((_token(alt, f"{where}.top_logprobs[{j}]"), alt.logprob) for j, alt in enumerate(entry.top_logprobs))
    return TokenLogprob(_token(entry, where), entry.logprob, top)


def verify_chat(loaded: LoadedModel, body: VerifyRequest, tolerances: Tolerances = Tolerances()) -> VerifyResult:
    """Re-execute a chat answer on ``loaded``; ValueError names the field of a body that cannot be read."""
    if body.model not in (loaded.name, loaded.identity):
        raise ValueError(f"model {body.model!r} is not the verifier's model {loaded.identity!r}")
    prompt = chat_prompt([(message.role, message.content) for message in body.messages])
    claims = [_claim(index, entry) for index, entry in enumerate(body.logprobs)]
    verdict = verify(loaded.model, prompt, Answer([claim.token for claim in claims], claims),
                     SamplingParams(body.temperature, body.top_p, body.seed), body.max_tokens,
                     tuple(s.encode() for s in body.stop), body.finish_reason, tolerances)
    return VerifyResult(model=loaded.identity, **asdict(verdict))


def verify_router(loaded: LoadedModel) -> APIRouter:
    """``POST /v1/verify``: re-execute an answer on this node's model, off the event loop."""
    router = APIRouter(tags=["verification"])

    @router.post("/v1/verify")
    async def verify_answer(body: VerifyRequest) -> VerifyResult:
        if body.model not in (loaded.name, loaded.identity):
            raise model_not_found(body.model)
        try:
            return await run_in_threadpool(verify_chat, loaded, body)
        except ValueError as error:
            raise invalid_request(str(error)) from None

    return router
