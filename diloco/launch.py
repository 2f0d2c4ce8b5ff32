"""``gonkad train``: create or resume a run directory, host the rendezvous, spawn the local workers, and
coordinate until the last round; the workers are ``gonkad train --join`` processes, the same command a
worker on another host runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

from diloco import checkpoint
from diloco.chain import CHAIN_KEY, ChainRun, read_chain_run, register_run
from diloco.checkpoint import RunLayout, RunRecord
from diloco.config import ChainSettings, LaunchSettings, TrainConfig, config_hash
from diloco.data import load_corpus
from diloco.inner import initial_weights
from diloco.membership import STORE_TIMEOUT_S, Coordinator, RunSpec
from diloco.metrics import Event, MetricsLog, Progress, plot
from mlnode.weights import weights_sha256
from sdk.client.process import stop_child

STOP_GRACE_S = 30.0


def prepare(layout: RunLayout, config: TrainConfig | None, resume: bool) -> RunRecord:
    """The run in ``layout``: read back to resume it, or created and written from ``config``."""
    if resume:
        if not layout.run_file.exists():
            raise ValueError(f"{layout.root} holds no run to resume")
        return layout.read_run()
    if config is None:
        raise ValueError("a new run needs its configuration")
    if layout.run_file.exists():
        raise ValueError(f"{layout.root} already holds a run; pass --resume to continue it")
    corpus = load_corpus(config)
    run = RunRecord(
        run_id=uuid.uuid4().hex,
        config_hash=config_hash(config, corpus.sha256),
        config=config,
        corpus_sha256=corpus.sha256,
        corpus_files=corpus.files,
    )
    checkpoint.write_text(layout.run_file, run.model_dump_json(indent=2) + "\n")
    return run


def local_names(count: int, reserved: dict[str, int]) -> dict[str, int]:
    """Local workers ``worker0`` …: each keeps the data index a resumed checkpoint gave it; others take
    the smallest free ones."""
    free = (i for i in range(count + len(reserved)) if i not in reserved.values())
    return {f"worker{i}": reserved[f"worker{i}"] if f"worker{i}" in reserved else next(free) for i in range(count)}


def device_for(setting: str, position: int) -> str:
    if setting in ("auto", "cuda") and torch.cuda.is_available():
        return f"cuda:{position % torch.cuda.device_count()}"
    return "cpu" if setting == "auto" else setting


def spawn(
    layout: RunLayout,
    address: str,
    name: str,
    threads: int,
    device: str,
    chain: ChainSettings | None,
    test_fault: bool = False,
) -> subprocess.Popen[bytes]:
    layout.log_file(name).parent.mkdir(parents=True, exist_ok=True)
    chain_flags = (
        []
        if chain is None
        else [
            "--chain-node",
            chain.chain_node,
            "--keyring-home",
            chain.keyring_home,
            "--keyring-backend",
            chain.keyring_backend,
        ]
    )
    with layout.log_file(name).open("ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gonkad",
                "train",
                "--join",
                address,
                "--worker-name",
                name,
                "--out",
                str(layout.root),
                "--threads",
                str(threads),
                "--device",
                device,
                *chain_flags,
                *(["--test-fault", "wrong-data-first"] if test_fault else []),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_NUM_THREADS": str(threads)},
        )


def stop(processes: dict[str, subprocess.Popen[bytes]], grace_s: float) -> None:
    """Wait for each worker to finish; terminate (then kill) those that do not."""
    for process in processes.values():
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            stop_child(process, grace_s=5)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so the local workers are stopped too."""
    raise KeyboardInterrupt


def launch(config: TrainConfig | None, settings: LaunchSettings) -> dict[str, object]:
    """Run this session of the run in ``settings.out``; returns the summary printed at the end."""
    torch.set_num_threads(1)
    layout = RunLayout(Path(settings.out))
    run = prepare(layout, config, settings.resume)
    count = run.config.workers if settings.local_workers is None else settings.local_workers
    local = {f"worker{i}" for i in range(count)}
    start = checkpoint.latest_complete(layout, local)
    first_round = start.checkpoint if start else 0
    end_round = min(settings.stop_after or run.config.rounds, run.config.rounds)
    chain_run = None if settings.chain is None else on_chain(layout, run, settings, first_round)
    if first_round < end_round:
        coordinate(
            layout, run, first_round, end_round, dict(start.workers) if start else {}, count, settings, chain_run
        )
    info = checkpoint.latest_complete(layout, local)
    if layout.metrics_file.exists():
        plot(layout.metrics_file, layout.plot_file)
    return {
        "out": str(layout.root),
        "run_id": run.run_id,
        "rounds_done": info.checkpoint if info else 0,
        "rounds": run.config.rounds,
        "model": str(layout.model_dir(info.checkpoint)) if info else None,
        "weights_sha256": info.weights_sha256 if info else None,
    }


def on_chain(layout: RunLayout, run: RunRecord, settings: LaunchSettings, first_round: int) -> ChainRun:
    """The run's x/learning registration: read back, or made now by the settings' ``creator``, escrowing their
    ``budget``, for the run's workers ``worker0`` … ``worker{K-1}`` (the keys of those names, local or joining
    from other hosts)."""
    chain, creator, budget = settings.chain, settings.creator, settings.budget
    assert chain is not None, "on_chain is called with chain settings"
    registered = read_chain_run(layout.root)
    if registered is not None:
        return registered
    if first_round > 0:
        raise ValueError("this run has rounds done off chain; only a new run can be registered on chain")
    if creator is None:
        raise ValueError("registering the run on chain needs --creator KEY")
    if budget is None:
        raise ValueError("registering the run on chain needs --budget N")
    return register_run(
        layout,
        run,
        chain,
        creator,
        [f"worker{i}" for i in range(run.config.workers)],
        weights_sha256(initial_weights(run.config)),
        budget,
    )


def host_store(run: RunRecord, settings: LaunchSettings, chain_run: ChainRun | None) -> tuple[dist.TCPStore, str]:
    """The rendezvous store, holding the run (and its chain run, if any) for the workers; its address for them."""
    host, port = settings.rendezvous.rsplit(":", 1)
    store = dist.TCPStore(
        host, int(port), is_master=True, wait_for_workers=False, timeout=timedelta(seconds=STORE_TIMEOUT_S)
    )
    store.set(
        "run",
        RunSpec(run=run, timeouts=settings.timeouts, keep_checkpoints=settings.keep_checkpoints).model_dump_json(),
    )
    if chain_run is not None:
        store.set(CHAIN_KEY, chain_run.model_dump_json())
    return store, f"{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{store.port}"


def coordinate(
    layout: RunLayout,
    run: RunRecord,
    first_round: int,
    end_round: int,
    reserved: dict[str, int],
    count: int,
    settings: LaunchSettings,
    chain_run: ChainRun | None,
) -> None:
    """Host the store, spawn ``count`` local workers and coordinate rounds ``first_round`` … ``end_round - 1``;
    ``reserved`` maps the starting checkpoint's workers to their data indices."""
    store, address = host_store(run, settings, chain_run)
    local = local_names(count, reserved)
    threads = settings.threads or max(1, (os.cpu_count() or 1) // max(1, count))
    log, progress = MetricsLog(layout.metrics_file), Progress(run.config.rounds, first_round)

    def emit(event: Event) -> None:
        progress.update(log.write(event))

    emit({"event": "session", "first_round": first_round, "end_round": end_round, "rendezvous": address})
    processes: dict[str, subprocess.Popen[bytes]] = {}
    finished = False
    signal.signal(signal.SIGTERM, _terminated)
    try:
        for position, name in enumerate(local):
            processes[name] = spawn(
                layout,
                address,
                name,
                threads,
                device_for(settings.device, position),
                settings.chain,
                test_fault=name == settings.test_fault_worker,
            )
            emit({"event": "spawned", "worker": name, "pid": processes[name].pid})
        Coordinator(
            store,
            layout,
            settings.timeouts,
            first_round,
            end_round,
            want=run.config.workers,
            reserved={**reserved, **local},
            processes=processes,
            emit=emit,
        ).run()
        finished = True
    finally:
        stop(processes, STOP_GRACE_S if finished else 0.0)
        progress.close()
