"""``gonkad executor start``: a host's executor proxy (``host/``) in front of its ML node, finishing on chain what
the node served (``host.Finisher``), under uvicorn.

    gonkad executor start --home H --node tcp://127.0.0.1:26657 --grpc-addr 127.0.0.1:9090 --from HOSTKEY \
        --mlnode http://127.0.0.1:8080 --port 8100 [--keyring-backend test] [--host 127.0.0.1] [--chain-id ID] \
        [--gas N] [--fees COINS] [--max-batch N] [--drain-s S] [--sprint | --no-sprint] [--sprint-chunk N] \
        [--sprint-max-nonces N] [--sprint-fault inflate|borrow|lazy-validator] \
        [--poc | --no-poc] [--poc-retention-s S] [--poc-fault accuse] [--answer-fault forge]

The URL it prints is the one the host registers for its node (``gonkad tx inference register-node NODE_ID URL``).
``--from`` is the host's key (the inference's executor: the only signer the chain takes a finish from); its
account must exist. ``--gas`` is the gas per finish message, ``--fees`` the fee of each finishing transaction.

Every argument and the chain are checked before serving (the ML node need not be up yet: a request then gets
502 and the TA tries another node); a failure is one ``Error:`` line and exit code 1. When the server listens,
one JSON line is printed: ``{"url", "address", "chain_id", "mlnode", "pid"}``. The process id is written to
``H/executor.pid`` (removed on exit); SIGTERM or SIGINT stop it cleanly: the server closes, the finisher goes on
for up to ``--drain-s`` seconds (default 10) with what it still holds, exit code 0. What it still holds then (or
when the process dies) stays in ``H/executor-finishes.jsonl`` (``JOURNAL_NAME``, the finisher's journal), and the
next ``executor start`` on that home sends it.

With ``--sprint`` (the default) the process also runs the host's race duties (``host.sprint.EpochFollower``, one
thread, started and stopped with the server): it races on its ML node and commits in each epoch's race stage,
serves ``GET /v1/sprint/openings``, and validates the other hosts in the race-validation stage, signing with the
finisher's ``TxSigner`` (one locally counted sequence for the host key). Each epoch's race is journalled in
``H/sprint-E.json``. ``--sprint-fault`` is TEST ONLY (a localnet's cheating host or lazy validator).

PoC V2 (``host.poc``): the proxy keeps the payload of every answer it finishes in ``H/poc-payloads.sqlite`` for
``--poc-retention-s`` seconds (default 3600) and serves it on ``POST /v1/poc/payload`` to the validator the chain
drew; with ``--poc`` (the default; ``--no-poc`` to leave the validations to others and miss them) the process also
re-executes the inferences the chain draws for this host (``host.poc.PocFollower``, one thread), signing its
verdicts with the same ``TxSigner``, journalled in ``H/poc-verdicts.json``. ``--poc-fault`` is TEST ONLY (a
localnet's false accuser), and so is ``--answer-fault`` (a localnet's host answering with made-up logprobs:
``host.faults``).

Models (``host.models``, configured in ``H/host.toml``'s ``[models]``): the proxy publishes the store
(``H/models``, filled by ``gonkad models publish``) at ``GET /models/<sha256>/…``; with ``fetch = true`` the process
also fetches every model the chain registers with a ``source_url``, checks it, serves it with an ML node of its own
and registers that node at this executor's URL (``host.models.ModelFollower``, one thread).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from gonkad.cmd.serve import check_gas, check_grpc, check_node, check_url, listen, parse_port, serve
from sdk.cli.flags import DEFAULT_HOME, DEFAULT_NODE
from sdk.cli.keyring import open_keyring
from sdk.coins import Coins, parse_coins
from sdk.services import gonka

if TYPE_CHECKING:
    from host import Executor, Finisher
    from host.models import ModelFollower
    from host.poc import PocFollower
    from host.sprint import EpochFollower
    from host.training import TrainingFollower

log = logging.getLogger("gonkad.executor")
PID_NAME = "executor"
JOURNAL_NAME = "executor-finishes.jsonl"
PAYLOADS_NAME = "poc-payloads.sqlite"
INFERENCE = gonka("inference").query


def cmd_start(args: argparse.Namespace) -> None:
    from host import FINISH_GAS, Executor, ExecutorConfig, Finisher, StartAdmission  # loads for this command only
    from host.models import ModelFollower, ModelStore, identify, load_host_config, store_root
    from host.poc import PayloadConfig, Payloads, PayloadStore, PocConfig, PocFollower
    from host.sprint import EpochFollower, SprintConfig
    from host.training import ReplayData, TrainingFollower, under

    port = parse_port(args.port)
    node = check_node(args.node)
    grpc_addr = check_grpc(args.grpc_addr)
    mlnode = check_url(args.mlnode, "--mlnode", ("http",))
    gas = check_gas(str(FINISH_GAS) if args.gas is None else args.gas)
    max_batch = _max_batch(args.max_batch)
    drain_s = _drain_s(args.drain_s)
    fees = parse_coins(args.fees) if args.fees else Coins()
    sprint = SprintConfig(
        home=Path(args.home),
        chunk=_sprint_chunk(args.sprint_chunk),
        max_nonces=_sprint_max_nonces(args.sprint_max_nonces),
        fault=args.sprint_fault,
    )
    payload_config = PayloadConfig(retention_s=_retention_s(args.poc_retention_s))
    poc = PocConfig(home=Path(args.home), fault=args.poc_fault)
    host_config = load_host_config(Path(args.home))
    models_config, training_config = host_config.models, host_config.training
    model_store = ModelStore(store_root(Path(args.home), models_config))
    keyring = open_keyring(args)
    key = keyring.private_key(keyring.get(args.from_).name)
    finisher = Finisher(
        node,
        key,
        grpc_addr,
        chain_id=args.chain_id or "",
        gas_per_message=gas,
        fees=fees,
        max_batch=max_batch,
        journal=Path(args.home) / JOURNAL_NAME,
    )
    follower = EpochFollower.of(finisher.querier, finisher.signer.submit, key, mlnode, sprint) if args.sprint else None
    store = PayloadStore(Path(args.home) / PAYLOADS_NAME, payload_config.retention_s, payload_config.prune_interval_s)
    payloads = Payloads(store, finisher.querier, finisher.address, payload_config)
    fetcher = (
        ModelFollower(finisher.querier, finisher.signer.submit, finisher.address, model_store, models_config, identify)
        if models_config.fetch
        else None
    )
    training = (
        TrainingFollower.of(
            finisher.querier, finisher.signer.submit, finisher.address, Path(args.home), training_config
        )
        if training_config.replay or training_config.claim
        else None
    )
    validator = (
        PocFollower.of(
            finisher.querier,
            finisher.signer.submit,
            finisher.latest_height,
            key,
            mlnode,
            poc,
            payloads,
            fetcher.upstream if fetcher is not None else None,
        )
        if args.poc
        else None
    )
    try:
        chain_id = _check_chain(finisher)
        executor = Executor(
            ExecutorConfig(
                mlnode=mlnode,
                finisher=finisher,
                admission=StartAdmission(finisher),
                sprint=follower,
                payloads=payloads,
                poc=validator,
                models=fetcher,
                store=model_store if models_config.publish else None,
                replay_data=ReplayData(under(Path(args.home), training_config.runs), finisher.address),
                training=training,
                release_key=key,
                fault=args.answer_fault,
                host=args.host,
                port=port,
            )
        )
        duties = (follower, validator, fetcher, training)
        _serve(args, executor, finisher, duties, port, {"chain_id": chain_id, "mlnode": mlnode}, drain_s)
    finally:
        store.close()
        finisher.close()
    log.info("executor stopped: %s", finisher.status() | {"recent": None})


def _max_batch(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"invalid --max-batch {text!r}: a positive whole number")
    return int(text)


def _sprint_max_nonces(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"invalid --sprint-max-nonces {text!r}: nonces raced per epoch at most, a positive integer")
    return int(text)


def _sprint_chunk(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 65536:
        raise ValueError(f"invalid --sprint-chunk {text!r}: nonces per ML node call, 1 to 65536")
    return int(text)


def _retention_s(text: str) -> float:
    try:
        retention_s = float(text)
    except ValueError:
        retention_s = 0.0
    if not retention_s > 0:
        raise ValueError(f"invalid --poc-retention-s {text!r}: seconds a payload is kept, a positive number")
    return retention_s


def _drain_s(text: str) -> float:
    try:
        drain_s = float(text)
    except ValueError:
        drain_s = -1.0
    if not 0 <= drain_s <= 3600:
        raise ValueError(f"invalid --drain-s {text!r}: seconds from 0 to 3600")
    return drain_s


def _check_chain(finisher: Finisher) -> str:
    """The chain's id, once the node, its queries and the host's account are seen to answer."""
    from protogen.gonka.inference.v1 import query_pb2
    from sdk.client.txbuilder import query_account

    chain_id = finisher.chain_id()  # the node answers …
    finisher.querier.query(
        INFERENCE + "Params",
        query_pb2.QueryParamsRequest(),  # … so do its queries
        query_pb2.QueryParamsResponse,
    )
    query_account(finisher.rpc, finisher.address)  # … and the host's account exists
    return chain_id


def _serve(
    args: argparse.Namespace,
    executor: Executor,
    finisher: Finisher,
    duties: tuple[EpochFollower | None, PocFollower | None, ModelFollower | None, TrainingFollower | None],
    port: int,
    shown: dict[str, str],
    drain_s: float,
) -> None:
    """Serve until stopped (printing the URL, the host's address and ``shown``), the finisher sending meanwhile and
    for up to ``drain_s`` seconds after, the duties' threads (the race's, PoC V2's, the fetched models',
    training's; None when off) running while the server does; fetched models' nodes are registered at the URL it
    listens on."""
    from sdk.http.asgi import uvicorn_config

    listener, url = listen(args.host, port)
    if duties[2] is not None:
        duties[2].url = url
    finisher.start()
    running = [duty for duty in duties if duty is not None]
    for duty in running:
        duty.start()
    try:
        serve(
            uvicorn_config(executor, args.host, port),
            listener,
            Path(args.home),
            PID_NAME,
            {"url": url, "address": finisher.address, **shown, "pid": os.getpid()},
            "the executor proxy did not start (see the log above)",
        )
    finally:
        for duty in running:
            duty.stop()
        finisher.stop(drain_s)


def register(sub: argparse._SubParsersAction) -> None:
    executor = sub.add_parser("executor", help="a host's executor proxy").add_subparsers(
        dest="executor_command", required=True
    )
    p = executor.add_parser("start", help="serve the executor proxy in front of an ML node (host/README.md)")
    p.add_argument(
        "--home",
        default=str(DEFAULT_HOME),
        help="the home whose keyring holds --from; the pid file, the journals, the PoC payloads, host.toml, the "
        "model store",
    )
    p.add_argument("--node", default=DEFAULT_NODE, help="CometBFT RPC address: status and transactions")
    p.add_argument("--grpc-addr", default=None, help="the node's gRPC HOST:PORT for queries (else RPC)")
    p.add_argument("--from", dest="from_", required=True, help="the host's key name or address")
    p.add_argument("--keyring-backend", choices=["file", "test"], default="file")
    p.add_argument("--mlnode", required=True, help="the ML node's base URL, e.g. http://127.0.0.1:8080")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", default="8100", help="0: any free port (the ready line names it)")
    p.add_argument("--chain-id", default=None, help="defaults to the node's network")
    p.add_argument("--gas", default=None, help="gas per finish message")  # default: host.FINISH_GAS
    p.add_argument("--fees", default="", help="fee of each finishing transaction, e.g. 100ngonka")
    p.add_argument("--max-batch", default="32", help="finish messages per transaction at most")
    p.add_argument("--drain-s", default="10", help="seconds to keep finishing after SIGTERM")
    p.add_argument(
        "--sprint",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the race duties: race and commit, serve openings, validate (default on)",
    )
    p.add_argument("--sprint-chunk", default="4096", help="nonces per ML node /v1/sprint/run call")
    p.add_argument("--sprint-max-nonces", default=None, help="nonces raced per epoch at most (default: the stage)")
    p.add_argument(
        "--sprint-fault",
        choices=["inflate", "borrow", "lazy-validator"],
        default=None,
        help="TEST ONLY: race or validate dishonestly, for localnet tests of the chain's verdicts",
    )
    p.add_argument(
        "--poc",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="re-execute the inferences the chain draws for this host and send the verdicts (default on)",
    )
    p.add_argument("--poc-retention-s", default="3600", help="seconds each answer's payload is kept for validators")
    p.add_argument(
        "--poc-fault",
        choices=["accuse"],
        default=None,
        help="TEST ONLY: judge every inference drawn for this host a mismatch, for localnet tests of disputes",
    )
    p.add_argument(
        "--answer-fault",
        choices=["forge"],
        default=None,
        help="TEST ONLY: answer one request in two with made-up logprobs, for localnet tests of PoC V2",
    )
    p.set_defaults(func=cmd_start)
