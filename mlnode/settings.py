"""An ML node's settings, checked before the model runtime is imported so a bad flag costs no torch import."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mlnode.config import PRESETS
from mlnode.sprint.params import DEFAULT_RACE_PRESET, race_preset


class NodeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(ge=0, le=65535)
    """0 lets the kernel pick a free port; the ready line names it."""
    model: str | None = None
    """A model directory, or with ``upstream`` the one upstream model to offer."""
    preset: str | None = None
    seed: int | None = None
    upstream: str | None = None
    threads: int | None = Field(None, ge=1)
    device: str = Field("auto", pattern=r"^(auto|cpu|cuda(:\d+)?)$")
    """``auto`` runs the local model on the GPU when torch sees one."""
    max_concurrency: int = Field(8, ge=1)
    max_queue: int = Field(32, ge=0)
    max_tokens_limit: int = Field(256, ge=1)
    max_body_bytes: int | None = Field(None, ge=1)
    """Larger request bodies are refused (413) unread; unset, ``limits.body_limit`` of the model's context."""
    race_preset: str = DEFAULT_RACE_PRESET
    """The Sprint race this node runs and verifies (``mlnode.sprint.params.RACE_PRESETS``)."""

    @field_validator("race_preset")
    @classmethod
    def _known_race(cls, name: str) -> str:
        race_preset(name)
        return name

    @model_validator(mode="after")
    def _one_source(self) -> NodeSettings:
        local_model = self.model is not None and self.upstream is None
        if [local_model, self.preset is not None, self.upstream is not None].count(True) != 1:
            raise ValueError("give exactly one of --model DIR, --preset NAME, --upstream URL")
        if self.preset is not None and self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; choose one of {', '.join(PRESETS)}")
        if self.seed is not None and self.preset is None:
            raise ValueError("--seed only goes with --preset")
        if self.upstream is not None and not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"--upstream must be an http(s) URL, not {self.upstream!r}")
        if self.upstream is not None and self.threads is not None:
            raise ValueError("--threads sets the local model's threads; it does not apply to --upstream")
        return self


def one_line(error: ValidationError) -> str:
    """A settings error as ``--flag: reason``, for the CLI's one-line failure."""
    parts = []
    for item in error.errors():
        reason = str(item.get("ctx", {}).get("error") or item["msg"])
        flag = "--" + str(item["loc"][0]).replace("_", "-") if item["loc"] else ""
        parts.append(f"{flag}: {reason}" if flag else reason)
    return "; ".join(parts)
