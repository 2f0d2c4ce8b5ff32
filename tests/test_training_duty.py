"""A host's training duty: x/learning's ``Assigned`` and ``Owed`` queries on an in-process chain, and the duty
replaying real rounds served over HTTP by the worker's host (the executor's ``GET /v1/training/…`` route under
uvicorn), against a scripted chain: an honest round is judged valid with the replay's hashes, a round whose
checkpoint does not follow from its data (``--test-fault wrong-data``) invalid, a worker that serves nothing
invalid after its tries, and the host's VALID checkpoints claimed once."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message
from servers import serve
from test_diloco import CONFIG, ROOT, RUN_TIMEOUT_S, TIMEOUTS, events_of, gonkad, launcher, wait_for
from test_learning import CREATOR, QUERY, V1, V2, W1, W2, LearningChain, addr, commit, verdict
from test_learning_pay import TWO, chain_with, claim, drawn, run_of, send

from diloco import chain as diloco_chain
from diloco.chain import ChainRun
from diloco.checkpoint import RunLayout
from diloco.pol import CheckpointRecord, find_record
from diloco.replay import judge, replay_segment
from host.training import ReplayData, TrainingConfig, bundle
from host.training.chain import TrainingChain
from host.training.duty import EMPTY_STATE_SHA256, RESEND_S, TrainingDuty
from host.training.fetch import BundleFetcher
from host.training.serve import TRAINING_FILE, send_replay_file
from mlnode.weights import weights_sha256
from protogen.gonka.learning.v1 import learning_pb2, query_pb2, tx_pb2
from sdk.client.process import stop_child
from sdk.http.asgi import Receive, Scope, Send, send_error
from sdk.http.errors import ApiError

HONEST, CHEAT, SILENT = addr(W1), addr(W2), addr(V2)
VERIFIER = addr(V1)


def assigned(chain: LearningChain, verifier: str) -> list[tuple[int, int, str]]:
    reply = chain.query(
        QUERY + "Assigned", query_pb2.QueryAssignedRequest(verifier=verifier), query_pb2.QueryAssignedResponse
    )
    return [(c.run_id, c.round, c.worker) for c in reply.checkpoints]


def owed(chain: LearningChain, worker: str) -> list[tuple[int, int, str]]:
    reply = chain.query(QUERY + "Owed", query_pb2.QueryOwedRequest(worker=worker), query_pb2.QueryOwedResponse)
    return [(c.run_id, c.round, c.worker) for c in reply.checkpoints]


def test_assigned_lists_a_verifiers_open_draws_and_owed_a_workers_unclaimed_pay(tmp_path: Path) -> None:
    chain = chain_with(tmp_path / "db", TWO)
    send(chain, CREATOR, run_of([W1, W2]))
    send(chain, W1, commit(W1))
    verifiers = [a for a, _ in drawn(chain, W1)]
    keys = {addr(k): k for k in (W2, V1, V2)}
    others = set(keys) - set(verifiers)
    assert all(assigned(chain, v) == [(1, 0, HONEST)] for v in verifiers)
    assert all(assigned(chain, o) == [] for o in others)
    assert owed(chain, HONEST) == []
    send(chain, keys[verifiers[0]], verdict(keys[verifiers[0]], W1))
    assert assigned(chain, verifiers[0]) == [] and assigned(chain, verifiers[1]) == [(1, 0, HONEST)]
    send(chain, keys[verifiers[1]], verdict(keys[verifiers[1]], W1))
    assert assigned(chain, verifiers[1]) == []
    assert owed(chain, HONEST) == [(1, 0, HONEST)] and owed(chain, CHEAT) == []
    send(chain, W1, claim(W1))
    assert owed(chain, HONEST) == []


# --- the duty against a scripted chain ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-round run of ``honest`` (spawned) and ``cheat`` (joined with the wrong-data fault), registered as chain
    run 7 with W1 and W2 as its workers (``chain.json``)."""
    out = tmp_path_factory.mktemp("training") / "run"
    with launcher(out, *CONFIG, "--rounds", "2", "--threads", "1", "--local-workers", "1", *TIMEOUTS) as process:
        wait_for(lambda: events_of(out, "session"), "the session")
        address = events_of(out, "session")[0]["rendezvous"]
        with (out.parent / "cheat.log").open("wb") as log:
            joiner = subprocess.Popen(
                gonkad(
                    "train", "--join", address, "--worker-name", "cheat", "--out", str(out), "--threads", "1",
                    "--test-fault", "wrong-data",
                ),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            process.communicate(timeout=RUN_TIMEOUT_S)
            assert process.returncode == 0, (out.parent / "run.stderr").read_text()[-3000:]
            assert joiner.wait(timeout=30) == 0, (out.parent / "cheat.log").read_text()[-3000:]
        finally:
            stop_child(joiner, grace_s=20)
    registered = ChainRun(chain_node="http://127.0.0.1:1", run_id=7, workers={"worker0": HONEST, "cheat": CHEAT})
    (out / bundle.CHAIN_FILE).write_text(registered.model_dump_json())
    return out


def on_chain(record: CheckpointRecord, worker: str) -> learning_pb2.Checkpoint:
    """The checkpoint x/learning holds for a local record: its hashes."""
    return learning_pb2.Checkpoint(
        run_id=7,
        round=record.round,
        worker=worker,
        config_hash=bytes.fromhex(record.config_hash),
        start_weights_hash=bytes.fromhex(record.start_weights_hash),
        weights_hash=bytes.fromhex(record.weights_hash),
        optimizer_hash=bytes.fromhex(record.optimizer_hash),
        data_order_hash=bytes.fromhex(record.data_hash),
    )


class ScriptedChain(TrainingChain):
    """x/learning as the duty reads it, scripted: what is assigned and owed, the checkpoints, the node URLs; what
    the duty sends is kept."""

    def __init__(self, checkpoints: dict[tuple[int, str], learning_pb2.Checkpoint], urls: dict[str, str]) -> None:
        self.address, self.records, self.node_urls = VERIFIER, checkpoints, urls
        self.open: list[learning_pb2.Checkpoint] = []
        self.due: list[learning_pb2.Checkpoint] = []
        self.sent: list[Message] = []

    def assigned(self) -> list[learning_pb2.Checkpoint]:
        return list(self.open)

    def owed(self) -> list[learning_pb2.Checkpoint]:
        return list(self.due)

    def checkpoint(self, run_id: int, round_number: int, worker: str) -> learning_pb2.Checkpoint | None:
        return self.records.get((round_number, worker))

    def max_reason_len(self) -> int:
        return 256

    def urls(self, operator: str) -> list[str]:
        return [self.node_urls[operator]] if operator in self.node_urls else []

    def send(self, messages: Sequence[Message], gas: int) -> str:
        self.sent.extend(messages)
        return "00"


def replay_host(data: ReplayData) -> Any:
    """The executor's replay-data route alone, as an ASGI app."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        found = TRAINING_FILE.match(scope["path"])
        try:
            if found is None:
                raise ApiError(404, f"Invalid URL ({scope['path']})")
            await send_replay_file(send, data, found)
        except ApiError as error:
            await send_error(send, error)

    return app


def test_the_duty_replays_what_it_is_drawn_for_and_claims_what_it_is_owed(faulty_run: Path, tmp_path: Path) -> None:
    records = {
        (r, worker): on_chain(find_record(faulty_run / "pol.jsonl", r, name), worker)
        for r in (0, 1)
        for name, worker in (("worker0", HONEST), ("cheat", CHEAT))
    }
    now = [0.0]
    with (
        serve(replay_host(ReplayData(faulty_run.parent, HONEST))) as honest_url,
        serve(replay_host(ReplayData(faulty_run.parent, CHEAT))) as cheat_url,
    ):
        chain = ScriptedChain(records, {HONEST: honest_url, CHEAT: cheat_url, SILENT: cheat_url})
        config = TrainingConfig(fetch_attempts=2, poll_s=1.0)
        duty = TrainingDuty(chain, BundleFetcher(5.0), config, tmp_path / "cache", clock=lambda: now[0])
        silent = learning_pb2.Checkpoint(run_id=7, round=1, worker=SILENT)
        chain.open = [records[(1, HONEST)], records[(1, CHEAT)], silent]
        assert duty.step() and duty.step()
        honest, cheat = chain.sent
        assert isinstance(honest, tx_pb2.MsgSubmitVerdict) and isinstance(cheat, tx_pb2.MsgSubmitVerdict)
        assert (honest.verifier, honest.run_id, honest.round, honest.worker, honest.valid, honest.reason) == (
            VERIFIER,
            7,
            1,
            HONEST,
            True,
            "",
        )
        assert honest.replay_weights_hash == records[(1, HONEST)].weights_hash
        assert honest.replay_optimizer_hash == records[(1, HONEST)].optimizer_hash
        assert (cheat.worker, cheat.valid) == (CHEAT, False)
        assert cheat.reason.startswith("weights_hash: replaying the round"), cheat.reason
        assert cheat.replay_weights_hash != records[(1, CHEAT)].weights_hash
        assert duty.step()  # the silent worker's host serves none of its data: one try
        assert len(chain.sent) == 2 and duty.counts.not_served == 1
        assert not duty.step()  # its next try is not due yet; the verdicts sent are not sent again
        now[0] += config.poll_s
        assert duty.step()
        [*_, nothing] = chain.sent
        assert isinstance(nothing, tx_pb2.MsgSubmitVerdict)
        assert (nothing.worker, nothing.valid) == (SILENT, False)
        assert nothing.reason.startswith("the worker served no replay data"), nothing.reason
        assert not list((tmp_path / "cache").rglob("*.safetensors")), "the replay data is not kept"
        assert duty.counts.as_dict() == {
            "replayed": 2, "verdicts_valid": 1, "verdicts_invalid": 2, "not_served": 2, "not_replayed": 0,
            "claims": 0, "errors": 0,
        }  # fmt: skip

    chain.open = []
    chain.due = [learning_pb2.Checkpoint(run_id=7, round=0, worker=VERIFIER, outcome=learning_pb2.OUTCOME_VALID)]
    sent = len(chain.sent)
    assert not duty.step()
    assert chain.sent[sent:] == [tx_pb2.MsgClaimTrainingReward(worker=VERIFIER, run_id=7, round=0)]
    assert not duty.step() and len(chain.sent) == sent + 1  # not claimed again while the claim may land
    now[0] += RESEND_S
    assert not duty.step() and len(chain.sent) == sent + 2  # still owed: its claim failed, so it goes again


def test_a_host_serves_only_its_own_workers_replay_data(faulty_run: Path) -> None:
    import httpx

    with serve(replay_host(ReplayData(faulty_run.parent, HONEST))) as url:
        own = httpx.get(f"{url}/v1/training/7/1/{HONEST}/meta.json")
        assert own.status_code == 200 and own.json()["worker_name"] == "worker0"
        for path in (
            f"/v1/training/7/1/{CHEAT}/meta.json",  # another worker's
            f"/v1/training/8/1/{HONEST}/meta.json",  # another run
            f"/v1/training/7/5/{HONEST}/meta.json",  # a round the run does not have
            f"/v1/training/7/1/{HONEST}/pol.json",  # not a bundle file
        ):
            answer = httpx.get(url + path)
            assert answer.status_code == 404 and answer.json()["error"]["code"] == "no_replay_data", path
        assert httpx.get(f"{url}/v1/training/7/1/{HONEST}/../../run.json").status_code == 404


def test_the_wire_bundle_is_what_a_replay_reads_where_gonkad_train_keeps_it(faulty_run: Path, tmp_path: Path) -> None:
    """The host side names the run directory's files without loading diloco: its names are diloco's, and the
    files it places in a fresh directory replay there exactly as in the run's own."""
    layout = RunLayout(faulty_run)
    places = bundle.bundle_paths(faulty_run, 1, "worker0")
    assert places["run.json"] == layout.run_file and places["start_optimizer.safetensors"] == layout.inner_file(
        1, "worker0"
    )
    assert places["start_weights.safetensors"].parent == layout.model_dir(1)
    assert places["meta.json"].parent == layout.segment_dir(1, "worker0")
    assert bundle.CHAIN_FILE == diloco_chain.CHAIN_FILE and bundle.POL_FILE == layout.pol_file.name
    assert EMPTY_STATE_SHA256 == weights_sha256({})
    copy = tmp_path / "copy"
    for name, place in places.items():
        target = bundle.bundle_paths(copy, 1, "worker0")[name]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(place.read_bytes())
    record = find_record(faulty_run / "pol.jsonl", 1, "worker0")
    assert judge(record, replay_segment(copy, 1, "worker0")).valid
