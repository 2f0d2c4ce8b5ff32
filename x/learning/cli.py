"""``gonkad tx learning …`` and ``gonkad query learning …``.

Values are parsed in the commands rather than by argparse, so that bad input is one ``Error:`` line.
"""

from __future__ import annotations

import argparse
import re

from protogen.gonka.learning.v1 import tx_pb2
from sdk.cli.flags import add_query_flags, add_tx_flags, checked_address, print_output
from sdk.cli.params import add_update_params_command
from sdk.cli.tx import broadcast_messages
from x.learning.client import LearningClient
from x.learning.validate import CHECKPOINT_HASHES, VERDICT_HASHES

HEX32 = re.compile(r"[0-9a-fA-F]{64}")
VERDICTS = {"valid": True, "invalid": False}


def flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def parse_hash(text: str, field: str) -> bytes:
    if not HEX32.fullmatch(text):
        raise ValueError(f"invalid {flag(field)} {text!r}: expected 64 hex characters (a SHA-256 hash)")
    return bytes.fromhex(text)


def parse_uint(text: str, what: str) -> int:
    if not text.isdigit():
        raise ValueError(f"invalid {what} {text!r}: expected a whole number")
    return int(text)


def cmd_create_run(args: argparse.Namespace) -> None:
    workers = [checked_address(w) for w in args.workers.split(",")]
    config_hash = parse_hash(args.config_hash, "config_hash")
    initial_weights_hash = parse_hash(args.initial_weights_hash, "initial_weights_hash")
    inner_steps, rounds = parse_uint(args.inner_steps, "--inner-steps"), parse_uint(args.rounds, "--rounds")
    budget = parse_uint(args.budget, "--budget")
    broadcast_messages(
        args,
        lambda creator: [
            tx_pb2.MsgCreateTrainingRun(
                creator=creator,
                config_hash=config_hash,
                workers=workers,
                inner_steps=inner_steps,
                rounds=rounds,
                preset=args.preset,
                initial_weights_hash=initial_weights_hash,
                budget=str(budget),
            )
        ],
    )


def cmd_claim(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    broadcast_messages(args, lambda worker: [tx_pb2.MsgClaimTrainingReward(worker=worker, run_id=run_id, round=round_)])


def cmd_commit_checkpoint(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    hashes = {field: parse_hash(getattr(args, field), field) for field in CHECKPOINT_HASHES}
    broadcast_messages(
        args, lambda worker: [tx_pb2.MsgCommitCheckpoint(worker=worker, run_id=run_id, round=round_, **hashes)]
    )


def cmd_submit_verdict(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    worker = checked_address(args.worker)
    if args.verdict not in VERDICTS:
        raise ValueError(f"invalid verdict {args.verdict!r}: expected 'valid' or 'invalid'")
    hashes = {field: parse_hash(getattr(args, field), field) for field in VERDICT_HASHES}
    broadcast_messages(
        args,
        lambda verifier: [
            tx_pb2.MsgSubmitVerdict(
                verifier=verifier,
                run_id=run_id,
                round=round_,
                worker=worker,
                valid=VERDICTS[args.verdict],
                reason=args.reason,
                **hashes,
            )
        ],
    )


def _client(args: argparse.Namespace) -> LearningClient:
    return LearningClient(args.node, args.grpc_addr)


def cmd_params(args: argparse.Namespace) -> None:
    print_output(args.output, {"params": _client(args).params()})


def cmd_run(args: argparse.Namespace) -> None:
    print_output(args.output, {"run": _client(args).run(parse_uint(args.run_id, "run id"))})


def cmd_runs(args: argparse.Namespace) -> None:
    print_output(args.output, {"runs": _client(args).runs()})


def cmd_checkpoint(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    checkpoint = _client(args).checkpoint(run_id, round_, checked_address(args.worker))
    print_output(args.output, {"checkpoint": checkpoint})


def cmd_checkpoints(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    print_output(args.output, {"checkpoints": _client(args).checkpoints(run_id, round_)})


def cmd_verdicts(args: argparse.Namespace) -> None:
    run_id, round_ = parse_uint(args.run_id, "run id"), parse_uint(args.round, "round")
    print_output(args.output, {"verdicts": _client(args).verdicts(run_id, round_, checked_address(args.worker))})


def cmd_assigned(args: argparse.Namespace) -> None:
    print_output(args.output, {"checkpoints": _client(args).assigned(checked_address(args.verifier))})


def cmd_owed(args: argparse.Namespace) -> None:
    print_output(args.output, {"checkpoints": _client(args).owed(checked_address(args.worker))})


def _positionals(parser: argparse.ArgumentParser, *names: str) -> None:
    for name in names:
        parser.add_argument(name, metavar=name.upper())


def register_tx(modules: argparse._SubParsersAction) -> None:
    learning = modules.add_parser("learning", help="training runs and Proof-of-Learning checkpoints").add_subparsers(
        dest="learning_command", required=True
    )
    p = learning.add_parser("create-run", help="register a DiLoCo training run; its id is in the create_run event")
    p.add_argument("--config-hash", metavar="HEX", required=True, help="SHA-256 of the training config")
    p.add_argument("--initial-weights-hash", metavar="HEX", required=True, help="SHA-256 of the starting weights")
    p.add_argument("--workers", required=True, help="comma-separated worker addresses")
    p.add_argument("--inner-steps", required=True)
    p.add_argument("--rounds", required=True)
    p.add_argument("--preset", default="", help="the model preset's name")
    p.add_argument("--budget", required=True, help="what the run pays its workers (integer, escrowed now)")
    add_tx_flags(p)
    p.set_defaults(func=cmd_create_run)
    p = learning.add_parser("commit-checkpoint", help="commit this worker's state hashes for a round: RUN ROUND")
    _positionals(p, "run_id", "round")
    for field in CHECKPOINT_HASHES:
        p.add_argument(flag(field), dest=field, metavar="HEX", required=True, help="SHA-256")
    add_tx_flags(p)
    p.set_defaults(func=cmd_commit_checkpoint)
    p = learning.add_parser("submit-verdict", help="judge a worker's checkpoint: RUN ROUND WORKER valid|invalid")
    _positionals(p, "run_id", "round", "worker", "verdict")
    for field in VERDICT_HASHES:
        p.add_argument(flag(field), dest=field, metavar="HEX", required=True, help="SHA-256 of the replayed state")
    p.add_argument("--reason", default="")
    add_tx_flags(p)
    p.set_defaults(func=cmd_submit_verdict)
    p = learning.add_parser("claim", help="claim this worker's pay for a VALID checkpoint: RUN ROUND")
    _positionals(p, "run_id", "round")
    add_tx_flags(p)
    p.set_defaults(func=cmd_claim)
    add_update_params_command(learning, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    learning = modules.add_parser("learning", help="training runs, checkpoints, verdicts").add_subparsers(
        dest="learning_command", required=True
    )
    for name, positionals, func, text in (
        ("params", (), cmd_params, "the module's params"),
        ("run", ("run_id",), cmd_run, "a training run by id"),
        ("runs", (), cmd_runs, "every training run"),
        ("checkpoint", ("run_id", "round", "worker"), cmd_checkpoint, "one worker's checkpoint of a round"),
        ("checkpoints", ("run_id", "round"), cmd_checkpoints, "every worker's checkpoint of a round"),
        ("verdicts", ("run_id", "round", "worker"), cmd_verdicts, "the verdicts on a checkpoint"),
        (
            "assigned",
            ("verifier",),
            cmd_assigned,
            "the PENDING checkpoints a verifier was drawn for and has not judged",
        ),
        ("owed", ("worker",), cmd_owed, "a worker's VALID checkpoints not claimed yet"),
    ):
        p = learning.add_parser(name, help=text)
        _positionals(p, *positionals)
        add_query_flags(p)
        p.set_defaults(func=func)
