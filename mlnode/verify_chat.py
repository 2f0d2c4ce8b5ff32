"""Verification of an OpenAI-shaped chat answer: the request a node was given, the logprobs it returned
(``choices[0].logprobs.content``) and its finish reason, read back into token ids for ``verify``;
served as ``POST /v1/verify`` by a node with a local model."""

from __future__ import annotations

from dataclasses import asdict, replace

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from mlnode import schemas
from mlnode.errors import context_length_exceeded, invalid_request, model_not_found
from mlnode.generate import MAX_TOP_LOGPROBS, TokenChoice
from mlnode.sampling import SamplingParams
from mlnode.tokenizer import chat_prompt, token_from_bytes
from mlnode.verify import Answer, Tolerances, tolerances_for, verify
from mlnode.weights import LoadedModel


class ClaimedTop(BaseModel):
    """One ``top_logprobs`` entry of the answer, as a request field: its text must be valid Unicode."""

    model_config = ConfigDict(extra="ignore")

    token: schemas.Text
    logprob: float
    bytes: list[int] | None


class ClaimedToken(ClaimedTop):
    """One entry of ``choices[0].logprobs.content``: no more alternatives than a chat request may ask for."""

    top_logprobs: list[ClaimedTop] = Field(max_length=MAX_TOP_LOGPROBS)


class VerifyRequest(BaseModel):
    """The executed request's parameters as the executor applied them (its reported seed, the
    max_tokens it used) and its answer. Text and sampling parameters are bound as in the chat request:
    an answer is only checked under parameters a generator accepts."""

    model_config = ConfigDict(extra="forbid")

    model: schemas.Text
    """The verifier's model name or its ``name@sha256:…`` identity."""
    messages: schemas.Messages
    max_tokens: int = Field(ge=1)
    temperature: schemas.Temperature = 1.0
    top_p: schemas.TopP = 1.0
    seed: schemas.Seed
    """The seed the executor reported; there is no default to replay."""
    stop: schemas.Stop = []
    finish_reason: schemas.Text
    logprobs: list[ClaimedToken]
    """``choices[0].logprobs.content`` of the answer: one entry per output token."""
    threshold: float | None = Field(None, ge=0.0, le=1.0)
    """The least score that matches; the model preset's default (``verify.PRESET_TOLERANCES``) if absent."""


class VerifyResult(BaseModel):
    model: str
    """Identity of the weights the answer was re-executed with."""
    match: bool
    score: float
    """Similarity of the claimed top-k logprobs to the re-executed ones, in [0, 1]."""
    threshold: float
    """The threshold the score was judged against."""
    token_agreement: float
    max_logprob_error: float
    mean_logprob_error: float
    reasons: list[str]
    failed_positions: list[int]


def _token(entry: ClaimedTop, where: str) -> int:
    try:
        return token_from_bytes(entry.bytes or [], entry.token)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _claim(index: int, entry: ClaimedToken) -> TokenChoice:
    where = f"logprobs[{index}]"
    top = tuple((_token(alt, f"{where}.top_logprobs[{j}]"), alt.logprob) for j, alt in enumerate(entry.top_logprobs))
    return TokenChoice(_token(entry, where), entry.logprob, top)


def verify_chat(loaded: LoadedModel, body: VerifyRequest, tolerances: Tolerances | None = None) -> VerifyResult:
    """Re-execute a chat answer on ``loaded`` with ``tolerances`` (the model preset's by default; the body's
    threshold, if any, replaces theirs); ValueError names the field of a body that cannot be read, and an
    answer that could not fit the context is refused as a chat request would be."""
    if body.model not in (loaded.name, loaded.identity):
        raise ValueError(f"model {body.model!r} is not the verifier's model {loaded.identity!r}")
    prompt = chat_prompt([(message.role, message.content) for message in body.messages])
    context, completion = loaded.config.max_seq_len, max(body.max_tokens, len(body.logprobs))
    if len(prompt) + completion > context:
        raise context_length_exceeded(context, len(prompt), completion)
    claims = [_claim(index, entry) for index, entry in enumerate(body.logprobs)]
    tolerances = tolerances or tolerances_for(loaded.config)
    if body.threshold is not None:
        tolerances = replace(tolerances, threshold=body.threshold)
    verdict = verify(
        loaded.model,
        prompt,
        Answer([claim.token for claim in claims], claims),
        SamplingParams(body.temperature, body.top_p, body.seed),
        body.max_tokens,
        tuple(s.encode() for s in body.stop),
        body.finish_reason,
        tolerances,
    )
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
