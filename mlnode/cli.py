"""``gonkad mlnode start``: serve a model directory, a seeded preset, or an upstream server over HTTP.

Arguments are checked here, before the model runtime is imported, and every invalid one is reported as
one line.
"""

from __future__ import annotations

import argparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mlnode.config import PRESETS


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


def cmd_start(args: argparse.Namespace) -> None:
    given = {name: value for name, value in vars(args).items()
             if name in NodeSettings.model_fields and value is not None}
    try:
        settings = NodeSettings.model_validate(given)
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None
    from mlnode import node  # torch and uvicorn load for this command only, not for every gonkad command

    node.run(settings)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mlnode`` and its actions to gonkad's top-level sub-commands."""
    mlnode = subparsers.add_parser("mlnode", help="the ML node: models behind an OpenAI-compatible API")
    actions = mlnode.add_subparsers(dest="mlnode_action", required=True)
    p = actions.add_parser("start", help="serve until interrupted; prints {\"url\": ...} when ready")
    p.add_argument("--port", required=True, help="0 picks a free port")
    p.add_argument("--host", help="default 127.0.0.1")
    p.add_argument("--model", help="a model directory; with --upstream, the one upstream model to offer")
    p.add_argument("--preset", help=f"serve a seeded random model of this size ({', '.join(PRESETS)})")
    p.add_argument("--seed", help="the preset's weight seed (default 0)")
    p.add_argument("--upstream", help="front this OpenAI-compatible server (e.g. vLLM) instead of a local model")
    p.add_argument("--threads", help="torch CPU threads for the local model (default: all cores but one, "
                   "which serves HTTP)")
    p.add_argument("--device", help="auto (default: cuda when available), cpu, cuda or cuda:N")
    p.add_argument("--max-concurrency", help="batch slots: requests decoded together (default 8)")
    p.add_argument("--max-queue", help="requests waiting for a slot before 429s (default 32)")
    p.add_argument("--max-tokens-limit", help="largest max_tokens a request may ask for (default 256)")
    p.add_argument("--max-body-bytes", help="largest request body; larger ones get 413 before they are read "
                   "(default 1 KiB per token of the model's context, at least 1 MiB; 4 MiB with --upstream)")
    p.set_defaults(func=cmd_start)
