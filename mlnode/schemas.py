"""OpenAI-compatible request and response bodies, and the node's own info body.

Request fields share their constraints through the annotated types below, so the chat request and the
verify request (``mlnode.verify_chat``) accept exactly the same text and sampling parameters.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
)

from mlnode.generate import MAX_TOP_LOGPROBS
from mlnode.sampling import MAX_TEMPERATURE, SEED_BOUND

MAX_STOP_SEQUENCES = 4
MAX_MESSAGES = 2048
"""OpenAI's own cap on ``messages``. Each message costs at least two tokens (role tag, EOT), so far fewer
fit a context; the cap only bounds the work done before the context check."""


SURROGATE = re.compile("[\ud800-\udfff]")
"""Code points that are not characters: JSON can still escape them (``"\\ud800"``), and a string holding
one has no UTF-8 form, so it fails wherever it is encoded (the prompt, an upstream request, an error
body that echoes it)."""


def encodable(text: str) -> str:
    """Refuse text with no UTF-8 form, before anything tries to encode it."""
    found = SURROGATE.search(text)
    if found is not None:
        raise ValueError(
            f"text must be valid Unicode: position {found.start()} holds the lone surrogate U+{ord(found.group()):04X}"
        )
    return text


def _one_string_is_one_stop(value: Any) -> Any:
    """A single string is one stop sequence, as OpenAI takes it."""
    return [value] if isinstance(value, str) else value


Text = Annotated[str, AfterValidator(encodable)]
"""Every string a client sends: valid Unicode, so it can always be encoded as UTF-8."""
Temperature = Annotated[float, Field(ge=0.0, le=MAX_TEMPERATURE)]
TopP = Annotated[float, Field(gt=0.0, le=1.0)]
Seed = Annotated[int, Field(ge=-SEED_BOUND, lt=SEED_BOUND)]
Stop = Annotated[
    list[Annotated[Text, Field(min_length=1)]],
    BeforeValidator(_one_string_is_one_stop),
    Field(max_length=MAX_STOP_SEQUENCES),
]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Text


Messages = Annotated[list[ChatMessage], Field(min_length=1, max_length=MAX_MESSAGES)]


def random_seed() -> int:
    """A seed below 2**53, so that every JSON reader gets it back exactly."""
    return secrets.randbelow(1 << 53)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: StrictBool = False


class ChatCompletionRequest(BaseModel):
    """The fields of OpenAI's chat completion request that this node honours; others are ignored.

    A missing ``seed`` gets a random one here, so every answer names the seed a verifier replays."""

    model_config = ConfigDict(extra="ignore")

    model: Text
    messages: Messages
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: Temperature = 1.0
    top_p: TopP = 1.0
    seed: Seed = Field(default_factory=random_seed)
    stop: Stop = Field(default_factory=list)
    n: int = 1
    stream: StrictBool = False
    """Strict, as every hop parses it: ``"stream": "yes"`` is a 400, never a stream the TA does not see."""
    stream_options: StreamOptions | None = None
    logprobs: StrictBool = False
    top_logprobs: int | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)

    @field_validator("temperature", "top_p", "seed", "stop", "n", "stream", "logprobs", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        """OpenAI clients send ``null`` for "not set"."""
        if value is None and info.field_name is not None:
            return cls.model_fields[info.field_name].get_default(call_default_factory=True)
        return value

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


def _utf8_safe(text: str) -> str:
    """Lone surrogates as U+FFFD: an error may name what it refuses (an unknown field's name, an
    upstream's message), and its body must still encode."""
    return SURROGATE.sub("\ufffd", text)


SafeText = Annotated[str, AfterValidator(_utf8_safe)]


class ErrorDetail(BaseModel):
    message: SafeText
    type: SafeText
    param: SafeText | None = None
    code: SafeText | int | None = None
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
