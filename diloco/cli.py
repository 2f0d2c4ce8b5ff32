"""``gonkad train``: run a DiLoCo training, take part in one (``--join``), or verify a round (``verify``).

Arguments are checked here before torch is imported; every invalid one is reported as one line. The settings
models (pydantic) load when a command runs, not when gonkad builds its parser.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

TRAIN_FLAGS = {
    "workers": "K: workers the run starts with, one data shard each (default 2)",
    "inner_steps": "H: inner AdamW steps between outer steps (default 50)",
    "rounds": "R: outer steps in the run (default 10)",
    "preset": "model size: tiny, small or base (default tiny)",
    "batch_size": "windows per inner step (default 8)",
    "seq_len": "bytes per window (default 128)",
    "inner_lr": "peak inner AdamW learning rate (default 3e-3)",
    "min_lr": "inner learning rate at the end of the cosine (default 3e-4)",
    "warmup_steps": "inner warmup steps (default 20)",
    "weight_decay": "inner AdamW weight decay (default 0.1)",
    "beta1": "inner AdamW beta1 (default 0.9)",
    "beta2": "inner AdamW beta2 (default 0.95)",
    "grad_clip": "inner gradient-norm clip (default 1.0)",
    "outer_lr": "outer Nesterov learning rate (default 0.7)",
    "outer_momentum": "outer Nesterov momentum (default 0.9)",
    "compression": "pseudo-gradient encoding: fp32, fp16, int8 or int4 (default fp32)",
    "int8_chunk": "elements per int8/int4 scale (default 4096)",
    "seed": "model initialisation and data-order seed (default 0)",
    "corpus": "python-docs (the Python documentation's prose, default) or stdlib (the standard library's code)",
    "corpus_bytes": "use only the first N corpus bytes (default: the whole corpus)",
    "val_every_file": "with --corpus stdlib: every N-th file is validation (default 50)",
    "eval_batches": "validation batches per evaluation (default 8)",
}
LAUNCH_FLAGS = {
    "rendezvous": "HOST:PORT the rendezvous store listens on (default 127.0.0.1:0, a free port)",
    "local_workers": "workers to spawn here (default: --workers); the others join with --join",
    "stop_after": "end this session after N rounds in total; --resume continues",
    "keep_checkpoints": "keep only the newest N checkpoints and their replay data (default: all)",
    "test_fault_worker": "TEST ONLY: this local worker trains round 0 on another data order than it commits",
}
TIMEOUT_FLAGS = {
    "startup_timeout_s": "how long round 0 waits for --workers workers (default 300)",
    "straggler_timeout_s": "how long a round waits for the rest after the first worker is ready (default 60)",
    "collective_timeout_s": "a collective not done by then has failed (default 300)",
}
CHAIN_FLAGS = {
    "chain_node": "CometBFT RPC of a chain node: register the run in x/learning and commit every round there",
    "keyring_home": "with --chain-node: the home whose keyring holds the keys (a worker's key is named like it)",
    "keyring_backend": "with --chain-node: test or file (default test)",
}
JOIN_ONLY = ("join", "worker_name", "test_fault")
SHARED = ("out", "threads", "device")
Settings = TypeVar("Settings", bound="BaseModel")


def _chain(args: argparse.Namespace) -> dict[str, object]:
    """The ``chain`` settings when ``--chain-node`` is given; the other chain flags need it."""
    from diloco.config import ChainSettings

    given = _given(args, CHAIN_FLAGS)
    if not given:
        return {}
    if "chain_node" not in given:
        raise ValueError(f"{_flag(next(iter(given)))} goes with --chain-node")
    return {"chain": _validated(ChainSettings, given)}


def _given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, object]:
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _validated(model: type[Settings], values: dict[str, object]) -> Settings:
    from pydantic import ValidationError

    from mlnode.settings import one_line

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def cmd_train(args: argparse.Namespace) -> None:
    from diloco.config import JoinSettings, LaunchSettings, Timeouts, TrainConfig

    train_given = _given(args, TRAIN_FLAGS)
    if args.join is not None:
        extra = [*train_given, *_given(args, (*LAUNCH_FLAGS, *TIMEOUT_FLAGS)), *(["resume"] if args.resume else [])]
        if extra:
            raise ValueError(f"--join takes its configuration from the run; drop {_flag(extra[0])}")
        settings = _validated(JoinSettings, {**_given(args, JOIN_ONLY + SHARED), **_chain(args)})
        from diloco import participant  # torch loads for training commands only

        participant.run(settings)
        return
    if args.worker_name is not None or args.test_fault is not None:
        raise ValueError(f"{'--worker-name' if args.worker_name is not None else '--test-fault'} goes with --join")
    if args.resume and train_given:
        raise ValueError(
            f"--resume continues the run in --out with its own configuration; drop {_flag(next(iter(train_given)))}"
        )
    config = None if args.resume else _validated(TrainConfig, train_given)
    timeouts = _validated(Timeouts, _given(args, TIMEOUT_FLAGS))
    settings = _validated(
        LaunchSettings,
        {
            **_given(args, (*LAUNCH_FLAGS, *SHARED, "creator", "budget")),
            "resume": args.resume,
            "timeouts": timeouts,
            **_chain(args),
        },
    )
    from diloco import launch
    from diloco.membership import RunAborted

    try:
        summary = launch.launch(config, settings)
    except RunAborted as exc:
        raise ValueError(f"training stopped: {exc}") from None
    print(json.dumps(summary))


def cmd_verify(args: argparse.Namespace) -> None:
    from diloco.config import VerifyRequest

    request = _validated(
        VerifyRequest,
        {**_given(args, ("run_dir", "round", "worker", "threads", "verifier")), "submit": args.submit, **_chain(args)},
    )
    run_dir = Path(request.run_dir)
    if not (run_dir / "run.json").exists():
        raise ValueError(f"{run_dir} is not a training run (no run.json)")
    if request.submit and (request.chain is None or request.verifier is None):
        raise ValueError("--submit needs --chain-node, --keyring-home and --from")
    from diloco.chain import committed_record, read_chain_run, submit_verdict
    from diloco.pol import find_record
    from diloco.replay import judge, replay_segment
    from x.learning.client import LearningClient

    record = find_record(run_dir / "pol.jsonl", request.round, request.worker)
    registered = read_chain_run(run_dir)
    client = None
    if registered is not None:
        client = LearningClient(request.chain.chain_node if request.chain else registered.chain_node)
        record = committed_record(client, registered, record)
    replay = replay_segment(run_dir, request.round, record.worker_name, request.threads)
    verdict = judge(record, replay)
    judged = {
        **asdict(verdict),
        "replay_weights_hash": replay.weights_hash,
        "replay_optimizer_hash": replay.optimizer_hash,
    }
    if not request.submit:
        print(json.dumps(judged))
        return
    if registered is None or client is None or request.chain is None or request.verifier is None:
        raise ValueError(f"{run_dir} was not registered on chain (no chain.json)")
    txhash = submit_verdict(client, registered, request.chain, request.verifier, record, replay, verdict)
    print(json.dumps({**judged, "txhash": txhash}))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``train`` (and ``train verify``) to gonkad's top-level sub-commands."""
    train = subparsers.add_parser(
        "train",
        help="DiLoCo training of the ML node's model, with Proof-of-Learning records; prints a JSON summary when done",
    )
    train.add_argument("--out", help="the run directory (checkpoints, metrics.jsonl, pol.jsonl, loss.png)")
    for name, text in {**TRAIN_FLAGS, **LAUNCH_FLAGS, **TIMEOUT_FLAGS}.items():
        train.add_argument(_flag(name), help=text)
    train.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    train.add_argument("--threads", help="torch CPU threads per worker (default: cores / local workers)")
    train.add_argument("--device", help="auto (default: cuda when available, else cpu), cpu, cuda or cuda:N")
    train.add_argument("--join", help="HOST:PORT: take part as one worker in a run coordinated there")
    train.add_argument("--worker-name", help="with --join: this worker's identity (its PoL key name)")
    train.add_argument(
        "--test-fault",
        choices=["wrong-data", "wrong-data-first"],
        help="with --join, TEST ONLY: train every round (or round 0 only) on another data order than the one "
        "committed (replays must refuse it)",
    )
    train.add_argument("--creator", help="with --chain-node: the key that registers a new run on chain")
    train.add_argument("--budget", help="with --creator: what the new run escrows and pays its workers (ngonka)")
    for name, text in CHAIN_FLAGS.items():
        train.add_argument(_flag(name), help=text)
    train.set_defaults(func=cmd_train)
    actions = train.add_subparsers(dest="train_action")
    verify = actions.add_parser(
        "verify",
        help="replay one worker's round and judge its PoL record; prints "
        '{"valid": ..., "reasons": [...], "weight_distance": ..., "replay_weights_hash": ..., '
        '"replay_optimizer_hash": ...}',
    )
    verify.add_argument("run_dir")
    verify.add_argument("round")
    verify.add_argument("worker", help="worker name or data index")
    verify.add_argument("--threads", help="replay threads (default: the worker's own, for an exact match)")
    verify.add_argument("--submit", action="store_true", help="sign the verdict and submit it to x/learning")
    verify.add_argument("--from", dest="verifier", help="with --submit: the verifier's key")
    for name, text in CHAIN_FLAGS.items():
        verify.add_argument(_flag(name), help=text)
    verify.set_defaults(func=cmd_verify)
