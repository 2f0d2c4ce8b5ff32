"""The backend that serves a loaded model from this process, through the batching engine."""

from __future__ import annotations

import asyncio
import codecs
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

from mlnode import generate
from mlnode.engine import Engine, Job
from mlnode.errors import context_length_exceeded, invalid_request, model_not_found
from mlnode.sampling import SamplingParams
from mlnode.schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    ChoiceLogprobs,
    ChunkChoice,
    Delta,
    Load,
    ModelCard,
    TokenLogprob,
    TopLogprob,
    Usage,
)
from mlnode.vocabulary import BYTES, Vocabulary
from mlnode.weights import LoadedModel


def openai_logprobs(tokens: Iterable[generate.TokenChoice], vocabulary: Vocabulary = BYTES) -> ChoiceLogprobs:
    """Per-token logprobs in OpenAI's shape: the chosen token and its ``top_logprobs`` alternatives."""
    text, raw = vocabulary.token_text, vocabulary.token_bytes
    return ChoiceLogprobs(
        content=[
            TokenLogprob(
                token=text(t.token),
                logprob=t.logprob,
                bytes=raw(t.token),
                top_logprobs=[TopLogprob(token=text(i), logprob=lp, bytes=raw(i)) for i, lp in t.top],
            )
            for t in tokens
        ]
    )


def answer_bytes(tokens: Iterable[generate.TokenChoice], vocabulary: Vocabulary) -> bytes:
    return b"".join(bytes(vocabulary.token_bytes(t.token)) for t in tokens)


@dataclass(frozen=True)
class _Reply:
    """The fields every body of one answer shares."""

    model: str
    fingerprint: str
    seed: int
    prompt_tokens: int
    logprobs: bool
    vocabulary: Vocabulary
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))

    def usage(self, completion_tokens: int) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=self.prompt_tokens + completion_tokens,
        )

    def chunk(self, choices: list[ChunkChoice], usage: Usage | None = None) -> ChatCompletionChunk:
        return ChatCompletionChunk(
            id=self.id,
            created=self.created,
            model=self.model,
            system_fingerprint=self.fingerprint,
            choices=choices,
            usage=usage,
            seed=self.seed,
        )

    def delta_chunk(
        self, delta: Delta, tokens: tuple[generate.TokenChoice, ...] = (), finish_reason: str | None = None
    ) -> ChatCompletionChunk:
        logprobs = openai_logprobs(tokens, self.vocabulary) if self.logprobs and tokens else None
        return self.chunk([ChunkChoice(delta=delta, logprobs=logprobs, finish_reason=finish_reason)])

    def completion(self, tokens: list[generate.TokenChoice], finish_reason: str) -> ChatCompletion:
        text = answer_bytes(tokens, self.vocabulary).decode("utf-8", errors="replace")
        choice = Choice(
            message=AssistantMessage(content=text),
            finish_reason=finish_reason,
            logprobs=openai_logprobs(tokens, self.vocabulary) if self.logprobs else None,
        )
        return ChatCompletion(
            id=self.id,
            created=self.created,
            model=self.model,
            system_fingerprint=self.fingerprint,
            choices=[choice],
            usage=self.usage(len(tokens)),
            seed=self.seed,
        )


class LocalStream:
    """Chunks as the engine releases tokens. Text goes through an incremental UTF-8 decoder, so a
    character split across byte tokens is sent whole and the streamed text equals the non-streamed."""

    def __init__(self, engine: Engine, job: Job, reply: _Reply, include_usage: bool) -> None:
        self._engine = engine
        self._job = job
        self._reply = reply
        self._include_usage = include_usage

    async def __aiter__(self) -> AsyncIterator[ChatCompletionChunk]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        yield self._reply.delta_chunk(Delta(role="assistant", content=""))
        completion_tokens = 0
        while True:
            update = await self._job.next()
            completion_tokens += len(update.tokens)
            raw = answer_bytes(update.tokens, self._reply.vocabulary)
            text = decoder.decode(raw, final=update.finish_reason is not None)
            if update.tokens or text:
                yield self._reply.delta_chunk(Delta(content=text), update.tokens)
            if update.finish_reason is not None:
                break
        yield self._reply.delta_chunk(Delta(), finish_reason=update.finish_reason)
        if self._include_usage:
            yield self._reply.chunk([], self._reply.usage(completion_tokens))

    async def aclose(self) -> None:
        self._engine.cancel(self._job)


class LocalBackend:
    def __init__(
        self,
        loaded: LoadedModel,
        max_concurrency: int,
        max_queue: int,
        max_tokens_limit: int,
        threads: int | None = None,
    ) -> None:
        self.loaded = loaded
        self.max_tokens_limit = max_tokens_limit
        self.engine = Engine(loaded.model, max_concurrency, max_queue, threads)
        self.fingerprint = f"fp_{loaded.sha256[:12]}"
        self.created = int(time.time())

    async def start(self) -> None:
        self.engine.start()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.engine.stop)

    def load(self) -> Load:
        return self.engine.load()

    async def models(self) -> list[ModelCard]:
        return [
            ModelCard(
                id=self.loaded.name,
                created=self.created,
                owned_by="gonka",
                identity=self.loaded.identity,
                max_model_len=self.loaded.config.max_seq_len,
                parameters=self.loaded.config.parameter_count(),
            )
        ]

    def _admit(self, request: ChatCompletionRequest) -> tuple[Job, _Reply]:
        """Check the request against the model and this node's limits, and queue it."""
        if request.model not in (self.loaded.name, self.loaded.identity):
            raise model_not_found(request.model)
        vocabulary = self.loaded.vocabulary
        prompt = vocabulary.chat_prompt([(message.role, message.content) for message in request.messages])
        limit = request.token_limit
        if limit is not None and limit > self.max_tokens_limit:
            param = "max_completion_tokens" if request.max_completion_tokens else "max_tokens"
            raise invalid_request(
                f"{param} is {limit}, above this node's limit of {self.max_tokens_limit}.",
                param,
                "integer_above_max_value",
            )
        context = self.loaded.config.max_seq_len
        if len(prompt) + (limit or 1) > context:
            raise context_length_exceeded(context, len(prompt), limit or 1)
        job = self.engine.submit(
            generate.GenerationRequest(
                prompt=prompt,
                max_tokens=limit or min(self.max_tokens_limit, context - len(prompt)),
                sampling=SamplingParams(request.temperature, request.top_p, request.seed),
                stop=tuple(s.encode() for s in request.stop),
                top_logprobs=request.top_logprobs or 0,
                vocabulary=vocabulary,
            )
        )
        reply = _Reply(self.loaded.name, self.fingerprint, request.seed, len(prompt), request.logprobs, vocabulary)
        return job, reply

    async def complete(self, request: ChatCompletionRequest) -> ChatCompletion:
        job, reply = self._admit(request)
        tokens: list[generate.TokenChoice] = []
        try:
            while True:
                update = await job.next()
                tokens.extend(update.tokens)
                if update.finish_reason is not None:
                    return reply.completion(tokens, update.finish_reason)
        finally:
            self.engine.cancel(job)

    async def stream(self, request: ChatCompletionRequest) -> LocalStream:
        job, reply = self._admit(request)
        return LocalStream(self.engine, job, reply, request.include_usage)
