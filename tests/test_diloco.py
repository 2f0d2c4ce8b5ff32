"""DiLoCo end to end: real ``gonkad train`` launchers with gloo worker processes on loopback.

One two-worker run trains and is then checked from every side: loss, bytes, PoL records and their
chaining, replay verdicts (honest, other thread count, four kinds of tampering), the verify command, and
the ML node serving its checkpoint. A second run stopped halfway and resumed must end on the same bytes;
a third loses a worker to SIGKILL and gains one through ``--join``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from safetensors.torch import load_file, save_file

from diloco.checkpoint import RunLayout
from diloco.compress import Compression
from diloco.metrics import read_events
from diloco.pol import CheckpointRecord, find_record
from diloco.replay import WEIGHT_TOLERANCE, judge, replay_segment
from mlnode.config import preset
from mlnode.weights import WEIGHTS_FILE
from sdk.client.process import stop_child

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ROOT = Path(__file__).resolve().parent.parent
TIMEOUTS = ["--startup-timeout-s", "60", "--straggler-timeout-s", "20", "--collective-timeout-s", "30"]
CONFIG = [
    "--workers",
    "2",
    "--inner-steps",
    "8",
    "--batch-size",
    "4",
    "--seq-len",
    "64",
    "--corpus-bytes",
    "1000000",
    "--warmup-steps",
    "2",
    "--compression",
    "int4",
    "--int8-chunk",
    "1024",
]
RUN = [*CONFIG, "--rounds", "4", "--threads", "1", *TIMEOUTS]
RUN_TIMEOUT_S = 120.0


def gonkad(*args: str) -> list[str]:
    return [sys.executable, "-m", "gonkad", *args]


def kill_spawned_workers(out: Path) -> None:
    """Any worker the launcher spawned that is somehow still running (the launcher stops them itself)."""
    if not (out / "metrics.jsonl").exists():
        return
    for event in read_events(out / "metrics.jsonl"):
        cmdline = Path(f"/proc/{event.get('pid')}/cmdline")
        if event["event"] == "spawned" and cmdline.exists() and b"--worker-name" in cmdline.read_bytes():
            os.kill(event["pid"], signal.SIGKILL)


@contextmanager
def launcher(out: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``gonkad train --out OUT ARGS``; it and its workers are stopped however the block ends."""
    with (out.parent / f"{out.name}.stderr").open("ab") as stderr:
        process = subprocess.Popen(
            gonkad("train", "--out", str(out), *args), cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr
        )
        try:
            yield process
        finally:
            stop_child(process, grace_s=20)
            kill_spawned_workers(out)
            assert process.stdout is not None
            process.stdout.close()


def train(out: Path, *args: str) -> dict[str, Any]:
    """Run a session to its end; its JSON summary."""
    with launcher(out, *args) as process:
        stdout, _ = process.communicate(timeout=RUN_TIMEOUT_S)
        stderr = (out.parent / f"{out.name}.stderr").read_text()
        assert process.returncode == 0, stderr[-3000:]
        return json.loads(stdout.decode().splitlines()[-1])


def wait_for(condition: Callable[[], object], what: str, timeout_s: float = 60.0) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def events_of(out: Path, kind: str) -> list[dict[str, Any]]:
    path = out / "metrics.jsonl"
    return [e for e in read_events(path) if e["event"] == kind] if path.exists() else []


def pol_lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "pol.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("diloco") / "a"
    return out, train(out, *RUN)


def test_two_workers_train_and_validation_loss_falls(run_a: tuple[Path, dict[str, Any]]) -> None:
    out, summary = run_a
    assert summary["rounds_done"] == 4 and summary["model"] == str(out / "checkpoints" / "000004" / "model")
    losses = [e["val_loss"] for e in sorted(events_of(out, "checkpoint"), key=lambda e: e["checkpoint"])]
    assert len(losses) == 5
    assert losses[0] > 5.3 and losses[-1] < losses[0] - 1.0, losses
    rounds = events_of(out, "round")
    assert [e["round"] for e in rounds] == [0, 1, 2, 3]
    assert all(e["workers"] == ["worker0", "worker1"] and e["attempts"] == 1 for e in rounds)
    sent = Compression("int4", 1024).payload_bytes(preset("tiny").parameter_count())
    assert all(e["bytes_per_worker"] == sent and e["bytes_sent"] == 2 * sent for e in rounds)
    assert [e["bytes_total"] for e in rounds] == [2 * sent * (r + 1) for r in range(4)]
    assert all(e["tokens"] == 2 * 8 * 4 * 64 for e in rounds)
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pol_records_chain_from_checkpoint_to_checkpoint(run_a: tuple[Path, dict[str, Any]]) -> None:
    """Each record starts from the global state the previous round's members attested, and from the
    optimizer state the same worker committed to a round earlier."""
    out, _ = run_a
    layout = RunLayout(out)
    run = layout.read_run()
    lines = pol_lines(out)
    records = {
        (line["round"], line["worker_name"]): CheckpointRecord.model_validate(
            {k: v for k, v in line.items() if k != "kind"}
        )
        for line in lines
        if line["kind"] == "worker"
    }
    attested = {
        (line["round"], line["worker_name"]): line["global_weights_hash"] for line in lines if line["kind"] == "global"
    }
    assert sorted(records) == sorted(attested) == [(r, f"worker{w}") for r in range(4) for w in range(2)]
    for (round_number, name), record in records.items():
        assert record.config_hash == run.config_hash
        assert record.worker_index == int(name[-1])
        assert record.start_weights_hash == layout.read_info(round_number).weights_sha256
        assert attested[(round_number, name)] == layout.read_info(round_number + 1).weights_sha256
        if round_number:
            assert record.start_weights_hash == attested[(round_number - 1, "worker0")]
            assert record.start_optimizer_hash == records[(round_number - 1, name)].optimizer_hash


def test_an_honest_round_verifies_exactly(run_a: tuple[Path, dict[str, Any]]) -> None:
    out, _ = run_a
    replay = replay_segment(out, 2, "worker1")
    assert replay.same_environment and replay.weight_distance == 0.0
    verdict = judge(find_record(out / "pol.jsonl", 2, "worker1"), replay)
    assert verdict.valid, verdict.reasons


def test_another_thread_count_is_judged_by_distance(run_a: tuple[Path, dict[str, Any]]) -> None:
    out, _ = run_a
    replay = replay_segment(out, 1, "worker0", threads=2)
    assert not replay.same_environment
    verdict = judge(find_record(out / "pol.jsonl", 1, "worker0"), replay)
    assert verdict.valid, verdict.reasons
    assert verdict.weight_distance is not None and verdict.weight_distance <= WEIGHT_TOLERANCE


def copy_segment(source: Path, target: Path, round_number: int, name: str) -> Path:
    """What a replay of (round, worker) reads, copied so it can be tampered with."""
    target.mkdir(parents=True)
    shutil.copy(source / "run.json", target / "run.json")
    for part in (Path("checkpoints") / f"{round_number:06d}" / "model", Path("rounds") / f"{round_number:06d}" / name):
        shutil.copytree(source / part, target / part)
    inner = Path("checkpoints") / f"{round_number:06d}" / "workers" / f"{name}.safetensors"
    (target / inner).parent.mkdir(parents=True)
    shutil.copy(source / inner, target / inner)
    return target


def nudge(path: Path, suffix: str) -> None:
    """Add 1e-3 to the first element of the first tensor whose name ends with ``suffix``."""
    tensors = load_file(str(path))
    name = next(n for n in sorted(tensors) if n.endswith(suffix))
    tensors[name].view(-1)[0] += 1e-3
    save_file(tensors, str(path))


def tamper_weights(run: Path, round_number: int) -> None:
    nudge(run / "checkpoints" / f"{round_number:06d}" / "model" / WEIGHTS_FILE, "weight")


def tamper_optimizer(run: Path, round_number: int) -> None:
    nudge(run / "checkpoints" / f"{round_number:06d}" / "workers" / "worker0.safetensors", "exp_avg")


def reorder_data(run: Path, round_number: int) -> None:
    path = run / "rounds" / f"{round_number:06d}" / "worker0" / "data_order.json"
    body = json.loads(path.read_text())
    body["window_starts"][0], body["window_starts"][1] = body["window_starts"][1], body["window_starts"][0]
    path.write_text(json.dumps(body))


@pytest.mark.parametrize(
    "tamper, reason",
    [
        (tamper_weights, "start_weights_hash"),
        (tamper_optimizer, "start_optimizer_hash"),
        (reorder_data, "data_hash: the stored data order is not the one the record names"),
    ],
)
def test_invalid_tampered_replay_data_is_rejected(
    run_a: tuple[Path, dict[str, Any]], tmp_path: Path, tamper: Callable[[Path, int], None], reason: str
) -> None:
    out, _ = run_a
    copy = copy_segment(out, tmp_path / "copy", 3, "worker0")
    tamper(copy, 3)
    verdict = judge(find_record(out / "pol.jsonl", 3, "worker0"), replay_segment(copy, 3, "worker0"))
    assert not verdict.valid
    assert any(reason in text for text in verdict.reasons), verdict.reasons


def test_invalid_forged_record_is_rejected(run_a: tuple[Path, dict[str, Any]]) -> None:
    out, _ = run_a
    honest = find_record(out / "pol.jsonl", 3, "worker0")
    replay = replay_segment(out, 3, "worker0")
    for field in ("weights_hash", "optimizer_hash"):
        forged = honest.model_copy(update={field: "0" * 64})
        verdict = judge(forged, replay)
        assert not verdict.valid and [r for r in verdict.reasons if r.startswith(field)], verdict.reasons
    other_order = honest.model_copy(update={"data_hash": find_record(out / "pol.jsonl", 3, "worker1").data_hash})
    assert any("prescribes" in r for r in judge(other_order, replay).reasons)


def test_verify_command_prints_one_verdict_line(run_a: tuple[Path, dict[str, Any]]) -> None:
    out, _ = run_a
    result = subprocess.run(
        gonkad("train", "verify", str(out), "3", "1"), cwd=ROOT, capture_output=True, timeout=60, check=True
    )
    record = find_record(out / "pol.jsonl", 3, "worker1")
    assert json.loads(result.stdout) == {
        "valid": True,
        "reasons": [],
        "weight_distance": 0.0,
        "replay_weights_hash": record.weights_hash,
        "replay_optimizer_hash": record.optimizer_hash,
    }


def test_the_ml_node_serves_a_trained_checkpoint(run_a: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    out, summary = run_a
    with (tmp_path / "node.stderr").open("wb") as stderr:
        node = subprocess.Popen(
            gonkad("mlnode", "start", "--model", summary["model"], "--port", "0", "--threads", "1"),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        try:
            assert node.stdout is not None
            line = node.stdout.readline()
            assert line, (tmp_path / "node.stderr").read_text()[-2000:]
            client = openai.OpenAI(base_url=f"{json.loads(line)['url']}/v1", api_key="x", max_retries=0)
            model = client.models.list().data[0].id
            assert model.startswith("diloco-tiny-") and model.endswith("-000004")
            answer = client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "def "}], max_tokens=8, temperature=0
            )
            assert answer.usage is not None and answer.usage.completion_tokens >= 1
            assert isinstance(answer.choices[0].message.content, str)
        finally:
            stop_child(node, grace_s=20)
            node.stdout.close()


def test_resume_from_a_checkpoint_ends_on_the_same_bytes(run_a: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Half a run, then ``--resume``: the resumed workers take the global state and their own optimizer
    state from checkpoint 2, and every later record and the final weights equal the uninterrupted run's."""
    out, summary = run_a
    half = train(tmp_path / "b", *RUN, "--stop-after", "2")
    assert half["rounds_done"] == 2
    whole = train(tmp_path / "b", "--resume", "--threads", "1", *TIMEOUTS)
    assert whole["rounds_done"] == 4 and whole["weights_sha256"] == summary["weights_sha256"]
    assert [e["first_round"] for e in events_of(tmp_path / "b", "session")] == [0, 2]

    def commitments(run: Path) -> set[tuple]:
        return {
            (
                line["round"],
                line["worker_name"],
                line["start_weights_hash"],
                line["weights_hash"],
                line["optimizer_hash"],
            )
            for line in pol_lines(run)
            if line["kind"] == "worker"
        }

    assert commitments(tmp_path / "b") == commitments(out)


def test_a_killed_worker_is_dropped_and_a_joiner_takes_part(tmp_path: Path) -> None:
    """SIGKILL worker1 after round 0; hold worker0 (SIGSTOP) until a new worker has joined through
    ``--join``, so it surely joins mid-run. The run finishes; the metrics show the drop and the join; the
    joiner started from the global state of the round it joined and its round replays as valid."""
    out = tmp_path / "elastic"
    joiner = None
    with launcher(out, *CONFIG, "--rounds", "5", "--threads", "1", *TIMEOUTS) as process:
        wait_for(lambda: events_of(out, "round"), "round 0")
        pids = {e["worker"]: e["pid"] for e in events_of(out, "spawned")}
        address = events_of(out, "session")[0]["rendezvous"]
        os.kill(pids["worker1"], signal.SIGKILL)
        os.kill(pids["worker0"], signal.SIGSTOP)
        try:
            with (tmp_path / "late.log").open("wb") as log:
                joiner = subprocess.Popen(
                    gonkad("train", "--join", address, "--worker-name", "late", "--out", str(out), "--threads", "1"),
                    cwd=ROOT,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            wait_for(lambda: [e for e in events_of(out, "joined") if e["worker"] == "late"], "the joiner's admission")
        finally:
            os.kill(pids["worker0"], signal.SIGCONT)
        try:
            stdout, _ = process.communicate(timeout=RUN_TIMEOUT_S)
            assert process.returncode == 0, (tmp_path / "elastic.stderr").read_text()[-3000:]
            assert joiner.wait(timeout=30) == 0, (tmp_path / "late.log").read_text()[-3000:]
        finally:
            stop_child(joiner, grace_s=20)
    assert json.loads(stdout.decode().splitlines()[-1])["rounds_done"] == 5
    dropped = events_of(out, "dropped")
    assert [(e["worker"], e["reason"]) for e in dropped] == [("worker1", "exited with -9")]
    joined_round = next(e["round"] for e in events_of(out, "joined") if e["worker"] == "late")
    assert joined_round >= 1
    members = {e["round"]: e["workers"] for e in events_of(out, "round")}
    assert sorted(members) == [0, 1, 2, 3, 4]
    assert members[0] == ["worker0", "worker1"]
    assert all(members[r] == ["worker0", "late"] for r in range(joined_round, 5))
    assert all("worker1" not in members[r] for r in range(1, 5))
    first = find_record(out / "pol.jsonl", joined_round, "late")
    assert first.start_weights_hash == RunLayout(out).read_info(joined_round).weights_sha256
    verdict = judge(first, replay_segment(out, joined_round, "late"))
    assert verdict.valid, verdict.reasons


def test_a_worker_whose_checkpoints_do_not_follow_from_its_data_is_judged_invalid(tmp_path: Path) -> None:
    """A joiner with the test-only ``wrong-data`` fault trains on another data order than the one it stores and
    commits: every replay of its rounds refuses the weights it claims, while the honest worker's replay exactly."""
    out = tmp_path / "faulty"
    with launcher(out, *CONFIG, "--rounds", "2", "--threads", "1", "--local-workers", "1", *TIMEOUTS) as process:
        wait_for(lambda: events_of(out, "session"), "the session")
        address = events_of(out, "session")[0]["rendezvous"]
        with (tmp_path / "faulty.log").open("wb") as log:
            joiner = subprocess.Popen(
                gonkad(
                    "train",
                    "--join",
                    address,
                    "--worker-name",
                    "cheat",
                    "--out",
                    str(out),
                    "--threads",
                    "1",
                    "--test-fault",
                    "wrong-data",
                ),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            process.communicate(timeout=RUN_TIMEOUT_S)
            assert process.returncode == 0, (tmp_path / "faulty.stderr").read_text()[-3000:]
            assert joiner.wait(timeout=30) == 0, (tmp_path / "faulty.log").read_text()[-3000:]
        finally:
            stop_child(joiner, grace_s=20)
    assert "TEST-ONLY training fault 'wrong-data'" in (tmp_path / "faulty.log").read_text()
    for round_number in (0, 1):
        cheat = judge(find_record(out / "pol.jsonl", round_number, "cheat"), replay_segment(out, round_number, "cheat"))
        assert not cheat.valid
        assert [r for r in cheat.reasons if r.startswith("weights_hash: replaying the round")], cheat.reasons
        assert not [r for r in cheat.reasons if r.startswith("data_hash")], cheat.reasons
        honest = judge(
            find_record(out / "pol.jsonl", round_number, "worker0"), replay_segment(out, round_number, "worker0")
        )
        assert honest.valid, honest.reasons


def test_the_test_fault_goes_with_join_only(tmp_path: Path) -> None:
    result = subprocess.run(
        gonkad("train", "--out", str(tmp_path / "x"), "--test-fault", "wrong-data"),
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "--test-fault goes with --join" in result.stderr.decode()
