"""OpenAI-compatible request and response bodies, and the node's own info body."""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from mlnode.generate import MAX_TOP_LOGPROBS

MAX_STOP_SEQUENCES = 4
SEED_BOUND = 1 << 63


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str


def random_seed() -> int:
    """A seed below 2**53, so that every JSON reader gets it back exactly."""
    return secrets.randbelow(1 << 53)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """The fields of OpenAI's chat completion request that this node honours; others are ignored.

    A missing ``seed`` gets a random one here, so every answer names the seed a verifier replays."""

    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int = Field(default_factory=random_seed, ge=-SEED_BOUND, lt=SEED_BOUND)
    stop: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, max_length=MAX_STOP_SEQUENCES)
    n: int = 1
    stream: bool = False
    stream_options: StreamOptions | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)

    @field_validator("temperature", "top_p", "seed", "stop", "n", "stream", "logprobs", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        """OpenAI clients send ``null`` for "not set"."""
        if value is None and info.field_name is not None:
            return cls.model_fields[info.field_name].get_default(call_default_factory=True)
        return value

    @field_validator("stop", mode="before")
    @classmethod
    def _one_stop_string(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("n")
    @classmethod
    def _single_choice(cls, value: int) -> int:
        if value != 1:
            raise ValueError("only n=1 is supported")
        return value

    @field_validator("top_logprobs")
    @classmethod
    def _needs_logprobs(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and not info.data.get("logprobs"):
            raise ValueError("logprobs must be true when top_logprobs is set")
        return value

    @property
    def token_limit(self) -> int | None:
        """The requested completion length; ``max_completion_tokens`` is OpenAI's newer name."""
        return self.max_completion_tokens or self.max_tokens

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


class ResponseBody(BaseModel):
    """Response parts keep fields they do not know, so an upstream's answer is relayed whole."""

    model_config = ConfigDict(extra="allow")


class TopLogprob(ResponseBody):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(TopLogprob):
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(ResponseBody):
    content: list[TokenLogprob] | None
    refusal: list[TokenLogprob] | None = None


class AssistantMessage(ResponseBody):
    role: Literal["assistant"] = "assistant"
    content: str | None
    refusal: str | None = None


class Choice(ResponseBody):
    index: int = 0
    message: AssistantMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None


class Usage(ResponseBody):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(ResponseBody):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]
    usage: Usage | None = None
    seed: int
    """Not in OpenAI's body: the sampling seed used, so the answer can be replayed."""


def _is_none(value: object) -> bool:
    return value is None


class Delta(ResponseBody):
    """Only the fields a chunk carries are sent: the role once, then content."""

    role: Literal["assistant"] | None = Field(None, exclude_if=_is_none)
    content: str | None = Field(None, exclude_if=_is_none)


class ChunkChoice(ResponseBody):
    index: int = 0
    delta: Delta
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None


class ChatCompletionChunk(ResponseBody):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[ChunkChoice]
    usage: Usage | None = None
    """Sent (as null until the last chunk) only when the request asked for ``include_usage``."""
    seed: int


class ModelCard(ResponseBody):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str
    identity: str | None = None
    """``name@sha256:…`` of the weights (see ``weights.weights_sha256``); unknown for a foreign upstream."""
    max_model_len: int | None = None
    parameters: int | None = None


class ModelList(ResponseBody):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | int | None = None
    """OpenAI sends a string; vLLM, relayed unchanged, sends the HTTP status."""


class ErrorResponse(BaseModel):
    error: ErrorDetail


class Load(BaseModel):
    in_flight: int
    """Requests holding a batch slot (or, upstream, a connection)."""
    queued: int
    max_concurrency: int
    max_queue: int


class Memory(BaseModel):
    kind: Literal["vram", "ram"]
    total_bytes: int
    available_bytes: int


class NodeInfo(BaseModel):
    """What a node publishes about itself so that work can be routed and priced."""

    models: list[ModelCard]
    device: str
    threads: int
    memory: Memory
    memory_bandwidth_gbps: float
    load: Load
