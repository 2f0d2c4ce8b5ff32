"""DiLoCo pieces in one process: the outer Nesterov step by hand, compression bounds and byte counts, the
corpus and data order, the schedule, inner optimizer state round trips, PoL records, the membership
protocol against fake workers, and the CLI's argument errors."""

from __future__ import annotations

import json
import subprocess
import threading
from datetime import timedelta
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from pydantic import ValidationError

from diloco import checkpoint
from diloco.chain import ChainRun, ChainSink
from diloco.checkpoint import RunLayout
from diloco.compress import Compression
from diloco.config import ChainSettings, Timeouts, TrainConfig
from diloco.data import Corpus, batches, corpus_files, data_order, load_corpus, shard, validation_batches
from diloco.inner import inner_optimizer, inner_steps, lr_at
from diloco.membership import Coordinator, Member, Plan, store_client
from diloco.metrics import Event
from diloco.outer import GlobalModel, average
from diloco.pol import CheckpointRecord, JsonlSink, data_order_sha256, find_record
from gonkad.cli import main
from mlnode.model import Transformer
from mlnode.weights import weights_sha256
from sdk.client.tx import Delivered, TxError
from sdk.keyring.keyring import Keyring

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SMALL = TrainConfig(
    workers=2,
    inner_steps=3,
    rounds=4,
    batch_size=2,
    seq_len=16,
    corpus="stdlib",
    corpus_bytes=200_000,
    warmup_steps=2,
    eval_batches=2,
)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(SMALL)


def test_outer_step_is_nesterov_by_hand() -> None:
    """m ← μ·m + g; θ ← θ − lr·(g + μ·m), from m = 0, over three steps; a model loaded from the weights and
    momentum continues the same way (what a resume or a joiner relies on)."""
    lr, mu = 0.7, 0.9
    start = {"a": torch.tensor([1.0, -2.0, 0.5]), "b": torch.tensor([[0.25]])}
    model = GlobalModel(start, lr, mu)
    theta, m = model.flat(start).clone(), torch.zeros(4)
    grads = [
        torch.tensor([0.1, -0.2, 0.3, 0.4]),
        torch.tensor([-0.5, 0.0, 0.25, 1.0]),
        torch.tensor([0.3, 0.3, -0.1, -0.2]),
    ]
    for step, g in enumerate(grads):
        if step == 2:
            model = GlobalModel(model.weights(), lr, mu)
            model.load(model.weights(), model.unflat(m))
        model.step(g)
        m = mu * m + g
        theta = theta - lr * (g + mu * m)
        assert torch.allclose(model.flat(model.weights()), theta, atol=1e-6)
        assert torch.allclose(model.flat(model.momentum()), m, atol=1e-6)
    assert set(model.weights()) == {"a", "b"}
    assert model.weights()["b"].shape == (1, 1)


def test_outer_step_without_momentum_is_plain_sgd() -> None:
    """μ = 0 (which torch's Nesterov refuses) is θ ← θ − lr·g; lr = 1 makes it plain model averaging."""
    model = GlobalModel({"a": torch.tensor([1.0, -2.0])}, lr=1.0, momentum=0.0)
    model.step(torch.tensor([0.25, -0.5]))
    model.step(torch.tensor([0.25, 0.0]))
    assert torch.equal(model.flat(model.weights()), torch.tensor([0.5, -1.5]))


@pytest.mark.parametrize("kind", ["fp32", "fp16", "int8", "int4"])
def test_compression_round_trips_within_its_bound_and_counts_bytes(kind: str) -> None:
    generator = torch.Generator().manual_seed(0)
    numel, chunk = 10_000, 1024
    flat = torch.randn(numel, generator=generator) * torch.logspace(-6, 0, numel)
    flat[:5] = torch.tensor([0.0, 1e-30, -3.0, 2.0**-20, 65000.0])
    codec = Compression(kind, chunk)
    payload = codec.encode(flat)
    assert payload.dtype == torch.uint8
    assert (
        payload.numel()
        == codec.payload_bytes(numel)
        == {
            "fp32": 4 * numel,
            "fp16": 2 * numel,
            "int8": numel + 4 * 10,
            "int4": numel // 2 + 4 * 10,
        }[kind]
    )
    error = (codec.decode(payload, numel) - flat).abs()
    assert bool((error <= codec.error_bound(flat)).all())
    if kind in ("int8", "int4"):
        per_chunk_max = torch.nn.functional.pad(flat.abs(), (0, 10 * chunk - numel)).view(10, chunk).amax(1)
        half_step = per_chunk_max / {"int8": 254, "int4": 14}[kind]
        assert torch.allclose(codec.error_bound(flat)[::chunk], half_step + flat.abs()[::chunk] * 2.0**-22)


def test_int4_packs_every_level_in_every_slot() -> None:
    """Each of the 15 levels survives packing in either half of a byte, with a partly filled last
    byte; values on the levels decode exactly."""
    codec = Compression("int4", 64)
    flat = torch.arange(-codec.levels, codec.levels + 1, dtype=torch.float32).repeat(3) * 0.5
    assert flat.numel() * codec.bits % 8 != 0
    assert torch.equal(codec.decode(codec.encode(flat), flat.numel()), flat)


def test_average_decodes_each_payload_in_fp32() -> None:
    codec = Compression("int8", 64)
    vectors = [torch.randn(300, generator=torch.Generator().manual_seed(seed)) for seed in range(3)]
    mean = average([codec.encode(v) for v in vectors], codec, 300)
    assert mean.dtype == torch.float32
    bound = sum(codec.error_bound(v) for v in vectors) / 3
    assert bool(((mean - torch.stack(vectors).mean(0)).abs() <= bound + 1e-7).all())


def test_corpus_is_the_standard_library_without_tests(corpus: Corpus) -> None:
    root = Path(__import__("sysconfig").get_paths()["stdlib"])
    files = corpus_files(root)
    assert files == sorted(files) and len(files) > 300
    assert not any({"test", "tests", "idle_test", "site-packages"} & set(f.relative_to(root).parts[:-1]) for f in files)
    assert corpus.train.numel() + corpus.validation.numel() == SMALL.corpus_bytes
    assert corpus.validation.numel() > 0 and corpus.train.dtype == torch.uint8
    assert corpus.sha256 == load_corpus(SMALL).sha256
    first, second = shard(corpus, 0, 2), shard(corpus, 1, 2)
    assert first.numel() == second.numel() and not torch.equal(first, second)


def test_data_order_is_reproducible_and_hashable(corpus: Corpus) -> None:
    length = shard(corpus, 0, 2).numel()
    order = data_order(SMALL, 0, 3, length)
    assert order.shape == (SMALL.inner_steps, SMALL.batch_size) and order.dtype == torch.int64
    assert torch.equal(order, data_order(SMALL, 0, 3, length))
    assert data_order_sha256(order) == data_order_sha256(data_order(SMALL, 0, 3, length))
    assert data_order_sha256(order) != data_order_sha256(data_order(SMALL, 1, 3, length))
    assert data_order_sha256(order) != data_order_sha256(data_order(SMALL, 0, 4, length))
    tokens = next(batches(shard(corpus, 0, 2), order, SMALL.seq_len))
    assert tokens.shape == (SMALL.batch_size, SMALL.seq_len + 1) and int(tokens.max()) < 256
    assert all(torch.equal(a, b) for a, b in zip(validation_batches(corpus, SMALL), validation_batches(corpus, SMALL)))


def test_schedule_warms_up_then_decays_to_the_floor() -> None:
    config = TrainConfig(inner_lr=1e-3, min_lr=1e-4, warmup_steps=4, inner_steps=10, rounds=3)
    assert lr_at(0, config) == pytest.approx(2.5e-4)
    assert lr_at(3, config) == pytest.approx(1e-3)
    assert lr_at(config.total_inner_steps, config) == pytest.approx(1e-4)
    decay = [lr_at(step, config) for step in range(4, config.total_inner_steps)]
    assert decay == sorted(decay, reverse=True)


def test_inner_state_survives_disk_and_training_continues_identically(corpus: Corpus, tmp_path: Path) -> None:
    model = Transformer(SMALL.architecture()).init_weights(1)
    optimizer = inner_optimizer(model, SMALL)
    data = shard(corpus, 0, 2)
    inner_steps(model, optimizer, data, data_order(SMALL, 0, 0, data.numel()), SMALL, 0)
    checkpoint.save_tensors(tmp_path / "inner.safetensors", checkpoint.inner_state(optimizer, model))
    twin = Transformer(SMALL.architecture())
    twin.load_state_dict(model.state_dict())
    twin_optimizer = inner_optimizer(twin, SMALL)
    checkpoint.load_inner_state(twin_optimizer, twin, checkpoint.load_tensors(tmp_path / "inner.safetensors"))
    assert weights_sha256(checkpoint.inner_state(twin_optimizer, twin)) == weights_sha256(
        checkpoint.inner_state(optimizer, model)
    )
    assert weights_sha256({}) == weights_sha256(checkpoint.inner_state(inner_optimizer(twin, SMALL), twin))
    order = data_order(SMALL, 0, 1, data.numel())
    inner_steps(model, optimizer, data, order, SMALL, 3)
    inner_steps(twin, twin_optimizer, data, order, SMALL, 3)
    assert weights_sha256(model.state_dict()) == weights_sha256(twin.state_dict())


def test_jsonl_sink_and_record_lookup(tmp_path: Path) -> None:
    hashes = {
        name: f"{i:064x}"
        for i, name in enumerate(
            ["config_hash", "start_weights_hash", "start_optimizer_hash", "data_hash", "weights_hash", "optimizer_hash"]
        )
    }
    sink = JsonlSink(tmp_path / "pol.jsonl", "alice")
    sink.record(CheckpointRecord(round=2, worker_index=1, worker_name="alice", **hashes))
    sink.record_global(2, "a" * 64, "b" * 64)
    lines = [json.loads(line) for line in (tmp_path / "pol.jsonl").read_text().splitlines()]
    assert lines[1] == {
        "kind": "global",
        "round": 2,
        "worker_name": "alice",
        "global_weights_hash": "a" * 64,
        "outer_momentum_hash": "b" * 64,
    }
    assert find_record(tmp_path / "pol.jsonl", 2, "alice") == find_record(tmp_path / "pol.jsonl", 2, "1")
    with pytest.raises(ValueError, match="no record"):
        find_record(tmp_path / "pol.jsonl", 3, "alice")
    with pytest.raises(ValidationError):
        CheckpointRecord(round=0, worker_index=0, worker_name="x", **{**hashes, "weights_hash": "XYZ"})


@pytest.fixture
def store() -> dist.TCPStore:
    return dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=20))


def client(store: dist.TCPStore) -> dist.TCPStore:
    """A connection of its own: one store client is not shared between threads."""
    return store_client(f"127.0.0.1:{store.port}")


def test_membership_retries_the_exchange_then_drops_a_dead_worker(store: dist.TCPStore, tmp_path: Path) -> None:
    """The coordinator against two scripted local workers: a failed exchange is redone by both before
    anyone steps; a worker whose process exits is left out of the next round; the run ends with a done
    plan."""
    events: list[Event] = []
    processes = {"a": subprocess.Popen(["sleep", "60"]), "b": subprocess.Popen(["sleep", "60"])}
    coordinator = Coordinator(
        store,
        RunLayout(tmp_path),
        Timeouts(straggler_timeout_s=5),
        first_round=0,
        end_round=2,
        want=2,
        reserved={"a": 0, "b": 1},
        processes=processes,
        emit=events.append,
    )
    thread = threading.Thread(target=coordinator.run, daemon=True)
    thread.start()
    try:
        a, b = Member(client(store), "a"), Member(client(store), "b")
        assert (a.admit().index, b.admit().index) == (0, 1)
        a.ready(0, 0)
        b.ready(0, 1)
        plan = a.plan("r0a0")
        assert plan == Plan(0, 0, "start", [(0, "a"), (1, "b")], sync=True, source="init")
        outcome = {}
        reporter = threading.Thread(target=lambda: outcome.update(a=a.report("r0a0", 0, True, True)))
        reporter.start()
        outcome["b"] = b.report("r0a0", 1, False, True)
        reporter.join()
        assert outcome == {"a": False, "b": False}
        assert a.plan("r0a1") == Plan(0, 1, "exchange", [(0, "a"), (1, "b")])
        reporter = threading.Thread(target=lambda: outcome.update(a=a.report("r0a1", 0, True, True)))
        reporter.start()
        outcome["b"] = b.report("r0a1", 1, True, True)
        reporter.join()
        assert outcome == {"a": True, "b": True}
        processes["b"].kill()
        a.ready(1, 0)
        plan = a.plan("r1a0")
        assert (plan.members, plan.sync, plan.source) == ([(0, "a")], False, "memory")
        assert a.report("r1a0", 0, True, True)
        a.ready(2, 0)
        assert a.plan("r2a0").phase == "done"
    finally:
        for process in processes.values():
            process.kill()
            process.wait()
        thread.join(timeout=30)
    assert not thread.is_alive()
    kinds = [(e["event"], e.get("worker")) for e in events]
    assert ("retry", None) in kinds and ("exited", "b") in kinds and ("dropped", "b") in kinds


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--workers", "0", "--out", "OUT"], "--workers: Input should be greater than or equal to 1"),
        (["train", "--preset", "huge", "--out", "OUT"], "unknown preset 'huge'"),
        (["train", "--seq-len", "4096", "--out", "OUT"], "exceeds the preset's max_seq_len"),
        (
            ["train", "--compression", "bf16", "--out", "OUT"],
            "--compression: Input should be 'fp32', 'fp16', 'int8' or 'int4'",
        ),
        (["train", "--inner-steps", "3"], "--out: Field required"),
        (["train", "--resume", "--out", "OUT", "--rounds", "9"], "drop --rounds"),
        (["train", "--resume", "--out", "OUT"], "holds no run to resume"),
        (["train", "--join", "127.0.0.1:1", "--out", "OUT"], "--worker-name: Field required"),
        (["train", "--join", "127.0.0.1:1", "--worker-name", "w", "--out", "OUT", "--rounds", "2"], "drop --rounds"),
        (
            ["train", "--join", "127.0.0.1:1", "--worker-name", "../w", "--out", "OUT"],
            "--worker-name: String should match",
        ),
        (["train", "--worker-name", "w", "--out", "OUT"], "--worker-name goes with --join"),
        (["train", "verify", "OUT", "-1", "w"], "--round: Input should be greater than or equal to 0"),
        (["train", "verify", "OUT", "1", "w"], "is not a training run"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_1(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path / "out") if arg == "OUT" else arg for arg in argv])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Error: ") and message in err
    assert not (tmp_path / "out").exists()


class ScriptedLearning:
    """Stands in for the chain client: refuses the first ``failures`` commits, then takes them."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.committed: list[int] = []

    def commit_checkpoint(self, key: object, run_id: int, round_: int, **hashes: bytes) -> Delivered:
        if self.failures:
            self.failures -= 1
            raise TxError("node unreachable")
        assert run_id == 7 and len(hashes) == 7
        self.committed.append(round_)
        return Delivered(txhash="AB", height=round_ + 1, gas_used=1, events=[])


def test_chain_sink_keeps_a_refused_round_and_commits_it_in_order_later(tmp_path: Path) -> None:
    Keyring(tmp_path, "test").add("worker0")
    settings = ChainSettings(chain_node="http://127.0.0.1:1", keyring_home=str(tmp_path))
    sink = ChainSink(
        JsonlSink(tmp_path / "pol.jsonl", "worker0"),
        settings,
        ChainRun(chain_node=settings.chain_node, run_id=7, workers={"worker0": "gonka1x"}),
        "worker0",
    )
    scripted = ScriptedLearning(failures=1)
    sink.client = scripted  # type: ignore[assignment]
    for round_ in (0, 1):
        sink.record(
            CheckpointRecord(
                round=round_,
                worker_index=0,
                worker_name="worker0",
                config_hash="a" * 64,
                start_weights_hash="b" * 64,
                start_optimizer_hash="c" * 64,
                data_hash="d" * 64,
                weights_hash="e" * 64,
                optimizer_hash="f" * 64,
            )
        )
        sink.record_global(round_, "1" * 64, "2" * 64)
        assert scripted.committed == ([] if round_ == 0 else [0, 1])
    assert sink.ready == {} and len((tmp_path / "pol.jsonl").read_text().splitlines()) == 4
