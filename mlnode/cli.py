"""``gonkad mlnode start``: serve a model directory, a seeded preset, or an upstream server over HTTP.

Arguments are checked here, before the model runtime is imported, and every invalid one is reported as
one line.
"""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from mlnode.config import PRESETS
from mlnode.settings import NodeSettings, one_line
from mlnode.sprint.params import DEFAULT_RACE_PRESET, RACE_PRESETS


def cmd_start(args: argparse.Namespace) -> None:
    given = {
        name: value for name, value in vars(args).items() if name in NodeSettings.model_fields and value is not None
    }
    try:
        settings = NodeSettings.model_validate(given)
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None
    from mlnode import node  # torch and uvicorn load for this command only, not for every gonkad command

    node.run(settings)


def cmd_export_hf(args: argparse.Namespace) -> None:
    """Write our model directory as a Hugging Face Llama directory; prints the exported identity."""
    import json
    from pathlib import Path

    from mlnode.hf_export import export_model_directory  # torch loads for this command only

    out = Path(args.out)
    sha = export_model_directory(Path(args.model), out)
    print(json.dumps({"directory": str(out), "identity": f"{out.name}@sha256:{sha}"}))


def cmd_identity(args: argparse.Namespace) -> None:
    """Print the identity a model directory is served under, as the node computes it when it loads it."""
    import json
    from pathlib import Path

    from mlnode.node import load_directory  # torch loads for this command only

    print(json.dumps({"identity": load_directory(Path(args.model)).identity}))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mlnode`` and its actions to gonkad's top-level sub-commands."""
    mlnode = subparsers.add_parser("mlnode", help="the ML node: models behind an OpenAI-compatible API")
    actions = mlnode.add_subparsers(dest="mlnode_action", required=True)
    p = actions.add_parser("start", help='serve until interrupted; prints {"url": ...} when ready')
    p.add_argument("--port", required=True, help="0 picks a free port")
    p.add_argument("--host", help="default 127.0.0.1")
    p.add_argument("--model", help="a model directory; with --upstream, the one upstream model to offer")
    p.add_argument("--preset", help=f"serve a seeded random model of this size ({', '.join(PRESETS)})")
    p.add_argument("--seed", help="the preset's weight seed (default 0)")
    p.add_argument("--upstream", help="front this OpenAI-compatible server (e.g. vLLM) instead of a local model")
    p.add_argument(
        "--threads", help="torch CPU threads for the local model (default: all cores but one, which serves HTTP)"
    )
    p.add_argument("--device", help="auto (default: cuda when available), cpu, cuda or cuda:N")
    p.add_argument("--max-concurrency", help="batch slots: requests decoded together (default 8)")
    p.add_argument("--max-queue", help="requests waiting for a slot before 429s (default 32)")
    p.add_argument("--max-tokens-limit", help="largest max_tokens a request may ask for (default 256)")
    p.add_argument(
        "--max-body-bytes",
        help="largest request body; larger ones get 413 before they are read "
        "(default 1 KiB per token of the model's context, at least 1 MiB; 4 MiB with --upstream)",
    )
    p.add_argument(
        "--race-preset",
        help=f"the Sprint race's parameters ({', '.join(RACE_PRESETS)}; default {DEFAULT_RACE_PRESET})",
    )
    p.set_defaults(func=cmd_start)
    p = actions.add_parser(
        "export-hf", help="write a model directory (e.g. a DiLoCo checkpoint's model/) as a Hugging Face Llama one"
    )
    p.add_argument("--model", required=True, help="our model directory (config.json + model.safetensors)")
    p.add_argument("--out", required=True, help="the Hugging Face directory to write")
    p.set_defaults(func=cmd_export_hf)
    p = actions.add_parser(
        "identity", help='load a model directory and print {"identity": "NAME@sha256:WEIGHTS_SHA256"} (its model id)'
    )
    p.add_argument("--model", required=True, help="a model directory (ours or Hugging Face)")
    p.set_defaults(func=cmd_identity)
