"""The host's race duties (host/sprint/) in process: real ML nodes running the ``tiny`` race (mlnode's Sprint
routes under uvicorn), a scripted chain that answers the queries the duties make and records the transactions
they send, and the executor proxy serving the openings route. The race commits growing counts and resumes from
its journal; the openings route answers 409, 404, 400 and 200 as documented and its openings verify on another
node; a validator finds an honest host valid and an inflating or borrowing one fraudulent, counts an unreachable
host as failing every sample, and sends all its validations in one transaction; a lazy validator passes all."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from google.protobuf.message import Message
from servers import serve

from host import Executor, ExecutorConfig
from host.sprint import EpochFollower, SprintConfig
from host.sprint.chain import STAGE_RACE, STAGE_RACE_VALIDATION
from host.sprint.config import Fault
from host.sprint.node import RaceNode
from host.sprint.validation import RESEND_BLOCKS
from mlnode.server import install_error_handlers
from mlnode.sprint.params import RACE_PRESETS, race_params_hash
from mlnode.sprint.routes import sprint_router
from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from protogen.gonka.sprint.v1 import query_pb2 as sprint_query
from protogen.gonka.sprint.v1 import sprint_pb2, tx_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from protogen.gonka.stake.v1 import stake_pb2
from sdk.client.signer import Sent
from sdk.crypto import bech32, secp256k1
from x.sprint.client.randomness import pair_randomness

TINY = RACE_PRESETS["tiny"]
EPOCH = 1
SEED = hashlib.sha256(b"host sprint seed").digest()
RANDOMNESS = hashlib.sha256(b"host sprint randomness").digest()
CHUNK = 1024
SAMPLES = 145
UNREACHABLE = "http://127.0.0.1:9"


def key_of(name: str) -> secp256k1.PrivateKey:
    return secp256k1.PrivateKey(hashlib.sha256(f"host sprint {name}".encode()).digest())


def address(key: secp256k1.PrivateKey) -> str:
    return bech32.encode(secp256k1.address_bytes(key.public_key))


@dataclass
class Chain:
    """A scripted chain: one epoch's stage and race, the commitments and validations its transactions made, the
    hosts' keys, powers and URLs; ``txs`` records (signer, messages) of every transaction."""

    stage: int = STAGE_RACE
    height: int = 10
    next_stage_height: int = 1000
    race: sprint_pb2.Race = field(default_factory=lambda: sprint_pb2.Race(epoch=EPOCH, seed=SEED))
    params_hash: bytes = race_params_hash(TINY)
    pubkeys: dict[str, bytes] = field(default_factory=dict)
    powers: dict[str, int] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    commitments: dict[str, sprint_pb2.Commitment] = field(default_factory=dict)
    validations: list[sprint_pb2.Validation] = field(default_factory=list)
    txs: list[tuple[str, list[Message]]] = field(default_factory=list)
    refuse: int = 0
    """Transactions still to refuse (as CheckTx would), before taking any."""
    lose: int = 0
    """Transactions still to take but never deliver (as one failing in its block or dropped from the mempool)."""

    def add(self, key: secp256k1.PrivateKey, url: str = "", power: int = 10) -> str:
        host = address(key)
        self.pubkeys[host], self.powers[host], self.urls[host] = key.public_key, power, url
        return host

    def query(self, path: str, request: Any, response_type: type[Any]) -> Any:
        method = path.rsplit("/", 1)[1]
        if method == "CurrentEpoch":
            epoch = epochs_pb2.Epoch(number=EPOCH, start_height=1)
            return epochs_query.QueryCurrentEpochResponse(
                height=self.height, epoch=epoch, stage=self.stage, next_stage_height=self.next_stage_height
            )
        if method == "Params":
            return sprint_query.QueryParamsResponse(
                params=sprint_pb2.Params(race_params_hash=self.params_hash, samples=SAMPLES)
            )
        if method == "Race":
            return sprint_query.QueryRaceResponse(race=self.race if request.epoch == EPOCH else None)
        if method == "Commitments":
            found = [c for c in self.commitments.values() if c.epoch == request.epoch]
            return sprint_query.QueryCommitmentsResponse(commitments=found)
        if method == "Validations":
            return sprint_query.QueryValidationsResponse(validations=self.validations)
        if method == "ValidatorPowers":
            powers = [stake_pb2.HostWeight(operator=h, weight=w) for h, w in self.powers.items() if w]
            return stake_query.QueryValidatorPowersResponse(powers=powers, total=sum(self.powers.values()))
        if method == "Nodes":
            url = self.urls.get(request.operator, "")
            nodes = [inference_pb2.MlNode(operator=request.operator, node_id="n", url=url)] if url else []
            return inference_query.QueryNodesResponse(nodes=nodes)
        raise AssertionError(f"unexpected query {path}")

    def submitter(self, signer: str) -> Any:
        def submit(messages: Sequence[Message], gas: int) -> Sent:
            if self.refuse:
                self.refuse -= 1
                raise RuntimeError("refused: out of gas")
            self.txs.append((signer, list(messages)))
            self.height += 1
            if self.lose:
                self.lose -= 1
                return Sent(f"TX{len(self.txs)}", b"")
            for message in messages:
                self.deliver(signer, message)
            return Sent(f"TX{len(self.txs)}", b"")

        return submit

    def deliver(self, signer: str, message: Message) -> None:
        if isinstance(message, tx_pb2.MsgSprintCommit):
            assert message.host == signer and message.params_hash == self.params_hash
            earlier = self.commitments.get(signer)
            assert earlier is None or message.count >= earlier.count, "a commit may not shrink"
            self.commitments[signer] = sprint_pb2.Commitment(
                host=signer, epoch=message.epoch, root=message.root, count=message.count, pubkey=self.pubkeys[signer]
            )
        else:
            assert isinstance(message, tx_pb2.MsgSprintValidation) and message.validator == signer
            pair = {(v.validator, v.host) for v in self.validations}
            assert (signer, message.host) not in pair, "a pair is validated once"
            self.validations.append(
                sprint_pb2.Validation(
                    validator=signer, host=message.host, epoch=message.epoch, samples=message.samples,
                    failures=message.failures,
                )
            )  # fmt: skip

    def commits(self, host: str) -> list[int]:
        return [
            m.count for signer, ms in self.txs for m in ms if signer == host and isinstance(m, tx_pb2.MsgSprintCommit)
        ]


def race_node_app() -> FastAPI:
    app = FastAPI()
    app.include_router(sprint_router(TINY, preset="tiny"))
    install_error_handlers(app)
    return app


@pytest.fixture(scope="module")
def mlnodes() -> Iterator[tuple[str, str]]:
    """Two ML nodes running the tiny race: the hosts' and the validators'."""
    with serve(race_node_app()) as first, serve(race_node_app()) as second:
        yield first, second


def follower(
    chain: Chain, key: secp256k1.PrivateKey, mlnode: str, home: Path, fault: Fault | None = None
) -> EpochFollower:
    config = SprintConfig(home=home, chunk=CHUNK, fetch_attempts=1, fetch_timeout_s=3, fault=fault)
    return EpochFollower.of(chain, chain.submitter(address(key)), key, mlnode, config)  # type: ignore[arg-type]


def race(duty: EpochFollower, chunks: int) -> None:
    for _ in range(chunks):
        assert duty.step()


def proxy(duty: EpochFollower, mlnode: str) -> Executor:
    return Executor(ExecutorConfig(mlnode=mlnode, finisher=None, admission=None, sprint=duty))


def test_race_commits_growing_counts_and_resumes_from_its_journal(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    chain, key = Chain(), key_of("racer")
    host = chain.add(key)
    first = follower(chain, key, mlnodes[0], tmp_path)
    race(first, 3)
    counts = chain.commits(host)
    assert len(counts) == 3 and counts == sorted(counts) and counts[0] > 0
    assert first.status()["last_commit"] == {"epoch": EPOCH, "count": counts[-1], "height": 12, "tx": "TX3"}
    assert first.status()["nonces_raced"] == 3 * CHUNK and first.status()["commits"] == 3
    first.stop()

    again = follower(chain, key, mlnodes[0], tmp_path)  # a restart: the journal has the race
    race(again, 1)
    resumed = again.race.races[EPOCH]
    assert resumed.next_nonce == 4 * CHUNK and again.status()["nonces_raced"] == CHUNK
    nonces = [proof.nonce for proof in resumed.proofs]
    assert nonces == sorted(set(nonces)) and len(nonces) == chain.commits(host)[-1]
    whole = RaceNode(mlnodes[1]).run(SEED, key.public_key, 0, 4 * CHUNK)
    assert resumed.proofs == whole  # the same list as one race over all four chunks
    assert chain.commits(host) == sorted(chain.commits(host))
    again.stop()


def test_race_stops_before_the_stage_ends_and_skips_another_race(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    chain, key = Chain(next_stage_height=12), key_of("late")
    chain.add(key)
    duty = follower(chain, key, mlnodes[0], tmp_path)
    assert not duty.step() and not chain.txs  # 10 + 2 blocks of margin: the last commit would be late
    chain.next_stage_height, chain.params_hash = 1000, b"\x01" * 32
    assert not duty.step() and not chain.txs
    assert "not the chain's" in duty.status()["skipped"][0]
    duty.stop()


def test_race_stops_at_its_nonce_budget(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    """With ``max_nonces`` 2.5 chunks: two chunks, a half chunk, then nothing more this epoch."""
    chain, key = Chain(), key_of("budget")
    host = chain.add(key)
    config = SprintConfig(home=tmp_path, chunk=CHUNK, max_nonces=5 * CHUNK // 2)
    duty = EpochFollower.of(chain, chain.submitter(address(key)), key, mlnodes[0], config)  # type: ignore[arg-type]
    race(duty, 3)
    assert not duty.step()
    assert duty.status()["nonces_raced"] == 5 * CHUNK // 2 and duty.race.races[EPOCH].next_nonce == 5 * CHUNK // 2
    assert chain.commits(host)[-1] == len(RaceNode(mlnodes[1]).run(SEED, key.public_key, 0, 5 * CHUNK // 2))
    duty.stop()


def test_openings_route(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    chain, key, validator_key = Chain(), key_of("opener"), key_of("asker")
    chain.add(key)
    validator = chain.add(validator_key)
    duty = follower(chain, key, mlnodes[0], tmp_path)
    race(duty, 2)
    with serve(proxy(duty, mlnodes[0])) as url:

        def ask(**params: Any) -> httpx.Response:
            return httpx.get(url + "/v1/sprint/openings", params=params, timeout=10)

        early = ask(epoch=EPOCH, validator=validator)
        assert early.status_code == 409 and early.json()["error"]["code"] == "randomness_not_fixed"
        chain.stage, chain.race.randomness = STAGE_RACE_VALIDATION, RANDOMNESS
        assert not duty.step()  # nobody else committed: nothing to validate
        assert ask(epoch=7, validator=validator).status_code == 404
        for bad, param in (({"epoch": "one", "validator": validator}, "epoch"), ({"epoch": EPOCH}, "validator")):
            refused = ask(**bad)
            assert refused.status_code == 400 and refused.json()["error"]["param"] == param
        assert ask(epoch=EPOCH, validator="gonka1notanaddress").status_code == 400
        opened = ask(epoch=EPOCH, validator=validator)
        assert opened.status_code == 200
        assert ask(epoch=EPOCH, validator=validator).json() == opened.json()  # cached
        status = httpx.get(url + "/v1/executor/status").json()["sprint"]
        assert status["openings_served"] == 2 and status["stage"] == "STAGE_RACE_VALIDATION"
    committed = chain.commitments[address(key)]
    commitment = {
        "root": committed.root.hex(),
        "count": committed.count,
        "r_target": RaceNode(mlnodes[1]).race().r_target,
        "seed": SEED.hex(),
        "pubkey": key.public_key.hex(),
    }
    pair = pair_randomness(RANDOMNESS, validator, address(key))
    verdict = RaceNode(mlnodes[1]).verify(commitment, pair, opened.json()["openings"])
    assert (verdict.fraud, verdict.failures, verdict.samples) == (False, 0, SAMPLES)
    duty.stop()


def test_validation_of_honest_inflating_borrowing_and_unreachable_hosts(
    mlnodes: tuple[str, str], tmp_path: Path
) -> None:
    chain = Chain()
    hosts: dict[str, EpochFollower] = {}
    for name, fault in (("honest", None), ("inflate", "inflate"), ("borrow", "borrow")):
        key = key_of(name)
        chain.add(key)
        hosts[name] = follower(chain, key, mlnodes[0], tmp_path / name, fault)  # type: ignore[arg-type]
        race(hosts[name], 3)
    gone = chain.add(key_of("gone"), UNREACHABLE)
    chain.commitments[gone] = sprint_pb2.Commitment(
        host=gone, epoch=EPOCH, root=b"\x07" * 32, count=50, pubkey=key_of("gone").public_key
    )
    inflated = chain.commitments[address(key_of("inflate"))]
    real = len(hosts["inflate"].race.races[EPOCH].proofs)
    assert inflated.count == real + -(-real // 5)
    chain.stage, chain.race.randomness = STAGE_RACE_VALIDATION, RANDOMNESS
    judge, lazy = key_of("judge"), key_of("lazy")
    judge_host, lazy_host = chain.add(judge), chain.add(lazy)
    with ExitStack() as stack:
        for name, duty in hosts.items():
            chain.urls[address(key_of(name))] = stack.enter_context(serve(proxy(duty, mlnodes[0])))
        honest_judge = follower(chain, judge, mlnodes[1], tmp_path / "judge")
        assert not honest_judge.step()
        lazy_judge = follower(chain, lazy, mlnodes[1], tmp_path / "lazy", "lazy-validator")
        assert not lazy_judge.step()
    sent = [(signer, ms) for signer, ms in chain.txs if signer in (judge_host, lazy_host)]
    assert [signer for signer, _ in sent] == [judge_host, lazy_host]  # one transaction each
    verdicts = {(v.validator, v.host): v.failures for v in chain.validations}
    threshold = RaceNode(mlnodes[1]).race().threshold
    by_name = {name: address(key_of(name)) for name in ("honest", "inflate", "borrow")}
    assert verdicts[(judge_host, by_name["honest"])] == 0
    assert verdicts[(judge_host, by_name["inflate"])] >= threshold
    assert verdicts[(judge_host, by_name["borrow"])] == SAMPLES
    assert verdicts[(judge_host, gone)] == SAMPLES
    assert {h: f for (v, h), f in verdicts.items() if v == lazy_host} == dict.fromkeys([*by_name.values(), gone], 0)
    assert all(v.samples == SAMPLES for v in chain.validations)
    assert honest_judge.status()["validations_sent"] == 4
    before = len(chain.txs)
    honest_judge.validation.done.clear()  # even asked again, a pair on chain is never sent twice
    chain.height += RESEND_BLOCKS
    assert not honest_judge.step() and len(chain.txs) == before
    for duty in (*hosts.values(), honest_judge, lazy_judge):
        duty.stop()


def test_a_commit_never_shrinks_below_the_chains_and_the_thread_races(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    """A host whose journal is gone but whose larger commitment is on chain commits nothing smaller; the
    follower's own thread races and commits until stopped."""
    chain, key = Chain(), key_of("forgetful")
    host = chain.add(key)
    chain.commitments[host] = sprint_pb2.Commitment(host=host, epoch=EPOCH, root=b"\x01" * 32, count=10**6)
    duty = follower(chain, key, mlnodes[0], tmp_path)
    race(duty, 2)
    assert chain.commits(host) == [] and duty.status()["proofs"] > 0
    del chain.commitments[host]
    duty.start()
    deadline = time.monotonic() + 10
    while not chain.commits(host) and time.monotonic() < deadline:
        time.sleep(0.05)
    duty.stop()
    assert chain.commits(host) and chain.commits(host) == sorted(chain.commits(host))


@dataclass
class Judging:
    """A prover that raced, serving its openings, and a judge's follower in the validation stage."""

    chain: Chain
    prover: str
    judge: str
    duty: EpochFollower


@contextmanager
def judging(mlnodes: tuple[str, str], tmp_path: Path, judge_name: str) -> Iterator[Judging]:
    chain = Chain()
    prover_key, judge_key = key_of("prover"), key_of(judge_name)
    prover, judge = chain.add(prover_key), chain.add(judge_key)
    prover_duty = follower(chain, prover_key, mlnodes[0], tmp_path / "prover")
    race(prover_duty, 2)
    chain.stage, chain.race.randomness = STAGE_RACE_VALIDATION, RANDOMNESS
    with serve(proxy(prover_duty, mlnodes[0])) as url:
        chain.urls[prover] = url
        duty = follower(chain, judge_key, mlnodes[1], tmp_path / "judge")
        yield Judging(chain, prover, judge, duty)
    for each in (prover_duty, duty):
        each.stop()


def test_a_refused_validation_is_sent_again_with_the_same_verdicts(mlnodes: tuple[str, str], tmp_path: Path) -> None:
    with judging(mlnodes, tmp_path, "judge again") as j:
        fetched: list[tuple[int, str]] = []
        fetch = j.duty.validation._fetch
        j.duty.validation._fetch = lambda epoch, host: fetched.append((epoch, host)) or fetch(epoch, host)  # type: ignore[method-assign]
        j.chain.refuse = 1
        assert not j.duty.step()
        assert j.duty.status()["errors"] == 1 and j.duty.status()["validations_sent"] == 0
        assert not j.duty.step()
        assert fetched == [(EPOCH, j.prover)]  # judged once, sent twice
        assert [(v.validator, v.host, v.failures) for v in j.chain.validations] == [(j.judge, j.prover, 0)]
        assert j.duty.status()["validations_sent"] == 1


def test_a_validation_that_never_lands_is_sent_again_after_a_few_blocks(
    mlnodes: tuple[str, str], tmp_path: Path
) -> None:
    """CheckTx took the transaction but it never made it into a block: the pairs still missing go out again
    ``RESEND_BLOCKS`` after it (not before), judged once, and once on chain the epoch is done."""
    with judging(mlnodes, tmp_path, "judge lost") as j:
        chain, duty = j.chain, j.duty
        judged: list[str] = []
        judge_once = duty.validation._judge
        duty.validation._judge = lambda c, r, s: judged.append(c.host) or judge_once(c, r, s)  # type: ignore[method-assign]
        chain.lose, before = 1, len(chain.txs)
        assert not duty.step()
        sent_at = chain.height - 1
        assert chain.validations == [] and len(chain.txs) == before + 1
        chain.height = sent_at + RESEND_BLOCKS - 1
        assert not duty.step() and len(chain.txs) == before + 1  # it may still land: not sent yet
        chain.height = sent_at + RESEND_BLOCKS
        assert not duty.step() and len(chain.txs) == before + 2
        assert judged == [j.prover]
        assert [(v.validator, v.host, v.failures) for v in chain.validations] == [(j.judge, j.prover, 0)]
        assert chain.txs[before][1] == chain.txs[before + 1][1]  # the same verdict, sent again
        chain.height += RESEND_BLOCKS
        assert not duty.step() and len(chain.txs) == before + 2 and EPOCH in duty.validation.done
        assert duty.status()["validations_sent"] == 2
