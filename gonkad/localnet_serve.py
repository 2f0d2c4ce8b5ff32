"""``gonkad localnet train-and-serve --home DIR``: on a running localnet, the whole path from training to a served
model, one step after another with a progress line each (on stderr), then the new model's id (stdout, JSON).

1. train a short DiLoCo run (``gonkad train``, the tiny preset, a few steps) under ``DIR/runs/``, registered in
   x/learning with a budget the faucet escrows; its workers are the hosts val0 and val1 (their keys, in a keyring
   of the run's own, named worker0 and worker1), each committing its rounds;
2. wait while the hosts the chain draws replay every round (their executors' training duty, served the replay
   data by the workers' executors) and send their verdicts, the run finishes, and the workers claim their pay;
3. publish its final global weights in val0's store (``gonkad models publish``), served by val0's executor;
4. submit an expedited governance proposal with ``MsgRegisterModel`` naming it, its ``source_url`` and the
   training run (val0);
5. vote yes with every validator key of the localnet's keyring;
6. wait for it to pass;
7. wait until a host that fetches models (``[services] fetching_hosts``) has loaded it and registered a node for
   it, and a TA lists it (``/v1/models``) and routes to that node.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from google.protobuf import any_pb2
from google.protobuf.message import Message

from diloco.chain import read_chain_run
from gonkad import localnet
from gonkad.cmd.models import publish
from gonkad.localnet_services import EXPORT_PASSPHRASE, TRAINING_RUNS
from host.models import load_host_config
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from protogen.gonka.learning.v1 import learning_pb2
from sdk.client.querier import Querier
from sdk.client.tx import Delivered, TxOptions, deliver_shared
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from sdk.keyring.keyring import Keyring
from sdk.params import GOV_AUTHORITY
from sdk.services import gonka
from x.learning.client import LearningClient

TRAIN = {"workers": 2, "inner-steps": 4, "rounds": 2, "batch-size": 4, "seq-len": 64, "warmup-steps": 2}
"""A run that finishes in about a minute on 2 busy cores; its loss still falls."""
WORKERS = {"worker0": "val0", "worker1": "val1"}
"""The run's workers (as ``gonkad train`` names them) and the localnet hosts whose keys they sign with."""
CREATOR = "faucet"
BUDGET = 4_000_000_003
"""ngonka: 1 GNK for each of the 2 workers' 2 rounds, and 3 left over (refunded when the run finishes)."""
RUN_KEYRING = "keyring"
GOV = "/cosmos.gov.v1.Query/"
PROPOSAL_GAS = "1000000"
Progress = Callable[[str], None]


def train_and_serve(
    root: Path, progress: Progress, timeout_s: float = 300.0, test_fault_worker: str | None = None
) -> dict[str, Any]:
    """Run the path on the localnet under ``root``; what the command prints. ``test_fault_worker`` (TEST ONLY):
    that worker trains round 0 on another data order than it commits (``gonkad train --test-fault-worker``)."""
    spec = localnet.load(root)
    services = spec.services
    if services is None or not any(load_host_config(Path(e.home)).models.fetch for e in services.of("executor")):
        raise ValueError(
            f"{root}: no host of this localnet fetches models (its executors' host.toml, [services] fetching_hosts; "
            "a localnet built before them needs `gonkad localnet stop` and a new home)"
        )
    publisher = services.of("executor")[0]
    node = spec.node(publisher.node)
    querier = Querier(node.rpc, f"127.0.0.1:{node.grpc_port}")
    run = root / TRAINING_RUNS / f"train-{int(time.time())}"
    keys = _run_keyring(root, run.parent / f"{run.name}-{RUN_KEYRING}")
    chain = ["--chain-node", node.rpc, "--keyring-home", str(keys), "--keyring-backend", "test"]
    fault = ["--test-fault-worker", test_fault_worker] if test_fault_worker else []

    step = Steps(progress)
    with step(f"training a tiny DiLoCo run on chain ({', '.join(WORKERS.values())} train, {CREATOR} pays)"):
        _gonkad(
            "train", "--out", str(run), "--preset", "tiny", "--threads", "1", *_flags(TRAIN),
            *chain, "--creator", CREATOR, "--budget", str(BUDGET), *fault,
        )  # fmt: skip
    learning, run_id = LearningClient(node.rpc), _chain_run_id(run)
    with step(f"waiting for the hosts' replays of run {run_id}, its end and the workers' claims"):
        _until(lambda: _settled(learning, run_id), timeout_s, f"run {run_id} not settled")
    with step(f"publishing its final weights on {publisher.name}"):
        published = publish(run, Path(publisher.home), publisher.url)
    model = inference_pb2.Model(
        id=published["model"],
        name=published["name"],
        weights_sha256=published["weights_sha256"],
        context_length=published["context_length"],
        price_per_token=services.settings.price_per_token_ngonka,
        source_url=published["source_url"],
        training_run_id=run_id,
    )
    with step(f"proposing {model.id}"):
        proposal = _propose(querier, root, spec.chain_id, model)
    keys = {info.name for info in Keyring(root, "test").list()}
    validators = [f"val{i}" for i in range(len(spec.nodes)) if f"val{i}" in keys]
    with step(f"voting yes on proposal {proposal} with {', '.join(validators)}"):
        for name in validators:
            vote = gov_tx.MsgVote(
                proposal_id=proposal, voter=_address(root, name), option=gov_pb2.VOTE_OPTION_YES, metadata=""
            )
            _deliver(querier, localnet.load_key(root, name), vote, spec.chain_id)
    with step(f"waiting for proposal {proposal} to pass"):
        _until(lambda: _passed(querier, proposal), timeout_s, f"proposal {proposal} did not pass")
    with step("waiting for a host to fetch, load and register it, and a TA to route to it"):
        hosts = _until(lambda: _served(querier, services.of("agent")[0].url, model.id), timeout_s, "not served")
    return {
        "model": model.id,
        "proposal_id": proposal,
        "run": str(run),
        "run_id": run_id,
        "source_url": model.source_url,
        "hosts": hosts,
    }


class Steps:
    """``[n] what … done in S s`` lines as the steps go."""

    def __init__(self, progress: Progress) -> None:
        self.progress, self.count = progress, 0

    def __call__(self, what: str) -> Steps:
        self.count += 1
        self.what, self.started = what, time.monotonic()
        self.progress(f"[{self.count}/7] {what} …")
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        seconds = time.monotonic() - self.started
        self.progress(f"[{self.count}/7] {self.what}: {'done' if kind is None else 'FAILED'} in {seconds:.0f} s")


def _flags(values: dict[str, int]) -> list[str]:
    return [part for name, value in values.items() for part in (f"--{name}", str(value))]


def _gonkad(*args: str) -> Any:
    """A ``gonkad`` command's JSON line (its progress passes through on stderr)."""
    done = subprocess.run([sys.executable, "-m", "gonkad", *args], stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gonkad {' '.join(args[:2])} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run_keyring(root: Path, home: Path) -> Path:
    """A keyring for ``gonkad train`` (``home``): the hosts' keys under the workers' names and the creator's."""
    keys, source = Keyring(home, "test"), Keyring(root, "test")
    for name, key in {**WORKERS, CREATOR: CREATOR}.items():
        if name not in {info.name for info in keys.list()}:
            keys.import_key(name, source.export(key, EXPORT_PASSPHRASE), EXPORT_PASSPHRASE)
    return home


def _chain_run_id(run: Path) -> int:
    registered = read_chain_run(run)
    if registered is None:
        raise RuntimeError(f"{run} was not registered on chain (no chain.json)")
    return registered.run_id


def _settled(learning: LearningClient, run_id: int) -> bool:
    """The run FINISHED and every VALID checkpoint of it claimed."""
    run = learning.run(run_id)
    if run["status"] != learning_pb2.RUN_STATUS_FINISHED:
        return False
    checkpoints = [c for r in range(int(run["rounds"])) for c in learning.checkpoints(run_id, r)]
    return all(c["paid"] for c in checkpoints if c["outcome"] == learning_pb2.OUTCOME_VALID)


def _address(root: Path, name: str) -> str:
    return address_of(localnet.load_key(root, name))


def _propose(querier: Querier, root: Path, chain_id: str, model: inference_pb2.Model) -> int:
    """The expedited proposal registering ``model``, from val0 with the expedited deposit; its id."""
    params = querier.query(GOV + "Params", gov_query.QueryParamsRequest(), gov_query.QueryParamsResponse).params
    message = any_pb2.Any()
    message.Pack(tx_pb2.MsgRegisterModel(authority=bech32.encode(GOV_AUTHORITY), model=model), type_url_prefix="/")
    submit = gov_tx.MsgSubmitProposal(
        messages=[message],
        initial_deposit=params.expedited_min_deposit,
        proposer=_address(root, "val0"),
        title=f"Register {model.name}",
        summary=f"Serve {model.id}, trained on this network, from {model.source_url}",
        expedited=True,
    )
    done = _deliver(querier, localnet.load_key(root, "val0"), submit, chain_id)
    return int(done.attribute("submit_proposal", "proposal_id"))


def _deliver(querier: Querier, key: secp256k1.PrivateKey, message: Message, chain_id: str) -> Delivered:
    """``message`` signed by ``key`` (a validator's, also its host's) and committed."""
    return deliver_shared(querier, key, [message], chain_id, TxOptions(gas=PROPOSAL_GAS))


def _passed(querier: Querier, proposal: int) -> bool:
    found = querier.query(
        GOV + "Proposal", gov_query.QueryProposalRequest(proposal_id=proposal), gov_query.QueryProposalResponse
    ).proposal
    if found.status in (gov_pb2.PROPOSAL_STATUS_REJECTED, gov_pb2.PROPOSAL_STATUS_FAILED):
        raise RuntimeError(f"proposal {proposal} ended {gov_pb2.ProposalStatus.Name(found.status)}")
    return found.status == gov_pb2.PROPOSAL_STATUS_PASSED


def _served(querier: Querier, ta: str, model_id: str) -> list[str] | None:
    """The hosts with a node registered for ``model_id`` that the TA sees alive, once it lists the model."""
    nodes = querier.query(
        gonka("inference").query + "Nodes",
        query_pb2.QueryNodesRequest(model=model_id),
        query_pb2.QueryNodesResponse,
    ).nodes
    try:
        listed = {card["id"] for card in httpx.get(f"{ta}/v1/models", timeout=5).json()["data"]}
        status = httpx.get(f"{ta}/v1/status", timeout=5).json()
    except httpx.HTTPError:  # a busy TA: asked again
        return None
    routed = [n for n in status["nodes"] if model_id in n["models"] and n["state"] == "alive"]
    return sorted({n.operator for n in nodes}) if nodes and model_id in listed and routed else None


def _until(ready: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (found := ready()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout_s:g} s")
        time.sleep(0.5)
    return found
