"""``agent.view.ChainInferenceView`` (and the host's ``StartAdmission``) without a node: its queries and
broadcasts answered by scripts, so every refusal's mapping to ``ChainError``, the sequence it signs at (from many
threads, and after a mismatch), the reassignment's message and the caches are checked exactly; and ``gonkad agent
start``'s refusals of bad input. The view and the command on a real chain are tests/test_agent_localnet.py."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2 as cosmos_tx
from google.protobuf.message import Message

from agent.chain import ChainError, Model, Node, StartRequest
from agent.config import DEFAULT_GAS_LIMIT
from agent.view import ChainInferenceView
from host import StartAdmission
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from protogen.gonka.poc.v1 import poc_pb2
from protogen.gonka.poc.v1 import query_pb2 as poc_query
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from protogen.gonka.stake.v1 import stake_pb2
from sdk.client.chain import ChainClient
from sdk.client.rpc import RPCError
from sdk.client.txbuilder import address_of, sign_tx
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.crypto.request import inference_id
from x.inference.client import Funds

TA = secp256k1.PrivateKey(hashlib.sha256(b"client ta").digest())
USER = secp256k1.PrivateKey(hashlib.sha256(b"client user").digest())
HOSTS = [address_of(secp256k1.PrivateKey(hashlib.sha256(bytes([i])).digest())) for i in range(3)]


def request(reassign: bool = False, executor: str = HOSTS[0]) -> StartRequest:
    return StartRequest(
        b"\x07" * 32,
        address_of(USER),
        USER.public_key,
        b"\x01" * 64,
        b"\x02" * 32,
        123,
        address_of(TA),
        "m@x",
        10,
        3,
        executor,
        "n0",
        5,
        b"\x03" * 32,
        reassign=reassign,
    )


class Script:
    """Answers for the view's queries (by method name) and broadcasts (in order); records what was sent."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.calls: list[str] = []
        self.broadcasts: list[dict[str, Any]] = []
        self.sent: list[cosmos_tx.TxRaw] = []
        self.delay_s = 0.0

    def query(self, path: str, req: Message, response_type: type[Message]) -> Message:
        method = path.rsplit("/", 1)[1]
        self.calls.append(method)
        answer = self.answers[method]
        if isinstance(answer, Exception):
            raise answer
        return answer(req) if callable(answer) else answer

    def broadcast_tx_sync(self, raw: bytes) -> dict[str, Any]:
        time.sleep(self.delay_s)
        self.sent.append(cosmos_tx.TxRaw.FromString(raw))
        return self.broadcasts.pop(0) if self.broadcasts else {"code": 0, "hash": "AB"}


def sequence_of(raw: cosmos_tx.TxRaw) -> int:
    return cosmos_tx.AuthInfo.FromString(raw.auth_info_bytes).signer_infos[0].sequence


def message_of(raw: cosmos_tx.TxRaw) -> Any:
    packed = cosmos_tx.TxBody.FromString(raw.body_bytes).messages[0]
    kind = {
        "/gonka.inference.v1.MsgStartInference": tx_pb2.MsgStartInference,
        "/gonka.inference.v1.MsgReassignInference": tx_pb2.MsgReassignInference,
    }[packed.type_url]
    return kind.FromString(packed.value)


@pytest.fixture
def view() -> tuple[ChainInferenceView, Script]:
    now = [0.0]
    chain = ChainInferenceView(
        "tcp://127.0.0.1:1", TA, tas=["http://other-ta"], chain_id="gonka-x", ttl_s=2.0, clock=lambda: now[0]
    )
    script = Script()
    chain.querier.query = script.query  # type: ignore[method-assign]
    chain.rpc.broadcast_tx_sync = script.broadcast_tx_sync  # type: ignore[method-assign]
    script.height = 10  # type: ignore[attr-defined]
    chain.app_height.load = lambda: script.height  # type: ignore[attr-defined]
    chain._account = (4, 10)
    script.answers["Inference"] = RPCError("NOT_FOUND: inference not found")
    script.answers["SpendableBalanceByDenom"] = bank_query.QuerySpendableBalanceByDenomResponse(
        balance={"denom": "ngonka", "amount": str(10**12)}
    )
    script.now = now  # type: ignore[attr-defined]
    return chain, script


def starts_of(raw: cosmos_tx.TxRaw) -> list[Any]:
    """The starts a transaction carries: its one ``MsgStartInference``, or those of its ``MsgStartInferences``."""
    packed = cosmos_tx.TxBody.FromString(raw.body_bytes).messages[0]
    if packed.type_url == "/gonka.inference.v1.MsgStartInferences":
        batch = tx_pb2.MsgStartInferences.FromString(packed.value)
        assert all(start.ta == batch.ta for start in batch.starts)
        return list(batch.starts)
    return [message_of(raw)]


def test_starts_from_many_threads_go_out_together_in_sequence(view: tuple[ChainInferenceView, Script]) -> None:
    """32 starts from 16 threads while each broadcast takes 5 ms: the ones that arrive during a send go out
    together in the next transaction (``MsgStartInferences``, gas the limit per start), at consecutive
    sequences; each caller gets the bytes of the transaction that carried its own start."""
    chain, script = view
    script.delay_s = 0.005
    with ThreadPoolExecutor(16) as pool:
        carried = list(pool.map(lambda i: chain.start_inference(replace(request(), timestamp_ns=1000 + i)), range(32)))
    sent = script.sent
    assert [sequence_of(raw) for raw in sent] == list(range(10, 10 + len(sent)))  # sent in the order signed
    assert len(sent) < 32 and sorted(s.timestamp_ns for raw in sent for s in starts_of(raw)) == list(range(1000, 1032))
    for i, tx in enumerate(carried):
        assert 1000 + i in [s.timestamp_ns for s in starts_of(cosmos_tx.TxRaw.FromString(tx))]
    for raw in sent:
        gas = cosmos_tx.AuthInfo.FromString(raw.auth_info_bytes).fee.gas_limit
        assert gas == DEFAULT_GAS_LIMIT * len(starts_of(raw))
    msg = starts_of(sent[0])[0]
    assert (msg.ta, msg.requester, msg.executor, msg.max_tokens, msg.fee_per_token, msg.seed) == (
        address_of(TA),
        address_of(USER),
        HOSTS[0],
        10,
        3,
        5,
    )
    assert chain._account == (4, 10 + len(sent))
    assert (chain.batcher.batches, chain.batcher.starts) == (len(sent), 32)


def test_refusals_map_to_chain_errors_and_keep_the_sequence(view: tuple[ChainInferenceView, Script]) -> None:
    chain, script = view
    for codespace, code, reason in (
        ("sdk", 5, "insufficient_funds"),
        ("inference", 9, "already_exists"),
        ("inference", 11, "invalid"),
        ("sdk", 13, "invalid"),
    ):
        script.broadcasts.append({"code": code, "codespace": codespace, "log": f"refused {code}"})
        with pytest.raises(ChainError) as refused:
            chain.start_inference(request())
        assert (refused.value.reason, refused.value.message) == (reason, f"refused {code}")
        assert refused.value.details == {"codespace": codespace, "code": str(code)}
    assert [sequence_of(raw) for raw in script.sent] == [10] * 4 and chain._account == (4, 10)


def test_a_sequence_mismatch_is_signed_again_once(view: tuple[ChainInferenceView, Script]) -> None:
    chain, script = view
    script.broadcasts.append(
        {
            "code": 32,
            "codespace": "sdk",
            "log": "account sequence mismatch, expected 17, got 10: incorrect account sequence",
        }
    )
    chain.start_inference(request())
    assert [sequence_of(raw) for raw in script.sent] == [10, 17] and chain._account == (4, 18)
    # twice in a row: the second refusal is the caller's
    mismatch = {"code": 32, "codespace": "sdk", "log": "account sequence mismatch, expected 30, got 18"}
    script.broadcasts += [mismatch, {**mismatch, "log": "account sequence mismatch, expected 31, got 30"}]
    with pytest.raises(ChainError) as refused:
        chain.start_inference(request())
    assert refused.value.reason == "invalid" and [sequence_of(raw) for raw in script.sent][2:] == [18, 30]

    # an unreachable node: the next start counts from the chain again
    def unreachable(raw: bytes) -> dict[str, Any]:
        raise RPCError("node unreachable")

    chain.rpc.broadcast_tx_sync = unreachable  # type: ignore[method-assign]
    with pytest.raises(RPCError):
        chain.start_inference(request())
    assert chain._account is None


def test_a_reassignment_and_a_known_id(view: tuple[ChainInferenceView, Script]) -> None:
    chain, script = view
    chain.start_inference(request(reassign=True, executor=HOSTS[1]))
    msg = message_of(script.sent[0])
    assert isinstance(msg, tx_pb2.MsgReassignInference)
    assert (msg.ta, msg.id, msg.executor) == (address_of(TA), b"\x07" * 32, HOSTS[1])
    assert "Inference" not in script.calls  # a reassignment's id is known: that is the point
    script.answers["Inference"] = query_pb2.QueryInferenceResponse(inference=inference_pb2.Inference(id=b"\x07" * 32))
    with pytest.raises(ChainError) as refused:
        chain.start_inference(request())
    assert refused.value.reason == "already_exists" and len(script.sent) == 1
    chain.check_known = False
    chain.start_inference(request())
    assert len(script.sent) == 2


def test_registry_weights_and_balances_cached_briefly(view: tuple[ChainInferenceView, Script]) -> None:
    chain, script = view
    node = inference_pb2.MlNode
    script.answers.update(
        {
            "Models": query_pb2.QueryModelsResponse(
                models=[inference_pb2.Model(id="m@x", context_length=64, price_per_token=3)]
            ),
            "Nodes": query_pb2.QueryNodesResponse(
                nodes=[
                    node(
                        operator=HOSTS[0],
                        node_id="a",
                        url="http://a",
                        models=["m@x"],
                        memory_bytes=9,
                        max_concurrency=2,
                    ),
                    node(operator=HOSTS[1], node_id="b", url="http://b", models=["other"], max_concurrency=1),
                    node(operator=HOSTS[2], node_id="c", url="http://c", models=["other", "m@x"], max_concurrency=4),
                ]
            ),
            "CurrentEpoch": epochs_query.QueryCurrentEpochResponse(epoch={"number": 7}),
            "EpochWeights": lambda req: stake_query.QueryEpochWeightsResponse(
                epoch=req.epoch, weights=[stake_pb2.HostWeight(operator=HOSTS[0], weight=5 + req.epoch)]
            ),
            "SpendableBalanceByDenom": lambda req: bank_query.QuerySpendableBalanceByDenomResponse(
                balance={"denom": req.denom, "amount": "77" if req.address == address_of(USER) else "0"}
            ),
            "Hosts": poc_query.QueryHostsResponse(),
        }
    )
    assert chain.models() == [Model("m@x", 64, 3)]
    assert chain.nodes("m@x") == [
        Node(HOSTS[0], "a", "http://a", ("m@x",), 9, 2, 12),
        Node(HOSTS[2], "c", "http://c", ("other", "m@x"), 0, 4, 0),
    ]
    assert [n.node_id for n in chain.nodes("other")] == ["b", "c"]
    assert chain.models() and chain.nodes("m@x")
    assert sorted(script.calls) == ["CurrentEpoch", "EpochWeights", "Hosts", "Models", "Nodes"]  # once each in the TTL
    assert chain.spendable(address_of(USER), "ngonka") == 77 and chain.spendable(HOSTS[0], "ngonka") == 0
    assert chain.spendable(address_of(USER), "ngonka") == 77
    assert script.calls.count("SpendableBalanceByDenom") == 2  # once per account and committed height
    assert chain.tas() == ["http://other-ta"] and chain.chain_id() == "gonka-x"
    # past the TTL, read again; no weights recorded for the epoch: the validator powers
    script.now[0] = 2.5  # type: ignore[attr-defined]
    script.answers["EpochWeights"] = RPCError("NOT_FOUND: no weights recorded for epoch 7")
    script.answers["ValidatorPowers"] = stake_query.QueryValidatorPowersResponse(
        powers=[stake_pb2.HostWeight(operator=HOSTS[2], weight=40)], total=40
    )
    assert [n.weight for n in chain.nodes("m@x")] == [0, 40]
    assert script.calls.count("Nodes") == 2 and script.calls.count("ValidatorPowers") == 1
    # a host x/poc holds INVALID is left out of routing, once the TA reads it
    invalid = poc_pb2.HostRecord(host=HOSTS[2], status=poc_pb2.HOST_STATUS_INVALID)
    script.answers["Hosts"] = lambda req: poc_query.QueryHostsResponse(
        hosts=[invalid] if req.status == poc_pb2.HOST_STATUS_INVALID else []
    )
    assert [n.node_id for n in chain.nodes("m@x")] == ["a", "c"]  # cached within the TTL
    script.now[0] = 5.0  # type: ignore[attr-defined]
    assert [n.node_id for n in chain.nodes("m@x")] == ["a"] and [n.node_id for n in chain.nodes("other")] == ["b"]


def test_agent_start_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    """``gonkad agent start``: bad arguments, a missing key and an unreachable node are one ``Error:`` line and
    exit code 1, with no pid file left behind."""
    home = str(tmp_path)
    base = ["--home", home, "--keyring-backend", "test"]
    assert (
        subprocess.run(
            [sys.executable, "-m", "gonkad", "keys", "add", "ta", *base], capture_output=True, text=True, timeout=60
        ).returncode
        == 0
    )
    for args, words in (
        (["--from", "ta", "--port", "http"], "invalid --port"),
        (["--from", "ta", "--port", "70000"], "invalid --port"),
        (["--from", "ta", "--node", "nowhere"], "invalid --node"),
        (["--from", "ta", "--grpc-addr", "127.0.0.1"], "invalid --grpc-addr"),
        (["--from", "ta", "--ta", "ftp://x"], "invalid --ta"),
        (["--from", "ta", "--gas", "0"], "invalid --gas"),
        (["--from", "nobody"], "nobody"),
        (["--from", "ta", "--node", f"tcp://127.0.0.1:{free_port()}", "--port", "0"], "unreachable"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "gonkad", "agent", "start", *base, *args], capture_output=True, text=True, timeout=60
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: "), (args, done.stderr)
        assert words in lines[0], (args, lines)
        assert not (tmp_path / "agent.pid").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Host:
    """A host's ``StartAdmission`` over scripted queries, broadcasts and heights."""

    def __init__(self, key: secp256k1.PrivateKey, spendable: int) -> None:
        self.client = ChainClient("tcp://127.0.0.1:1", key, None, "gonka-x", 100_000, Coins(), 5.0, 0.0, lambda: 0.0)
        self.script = Script()
        self.script.answers["SpendableBalanceByDenom"] = bank_query.QuerySpendableBalanceByDenomResponse(
            balance={"denom": "ngonka", "amount": str(spendable)}
        )
        self.height = 10
        self.client.querier.query = self.script.query  # type: ignore[method-assign]
        self.client.rpc.broadcast_tx_sync = self.script.broadcast_tx_sync  # type: ignore[method-assign]
        self.client.latest_height = lambda: self.height  # type: ignore[method-assign]
        self.client.rpc.app_height = lambda: self.height  # type: ignore[method-assign]
        self.now = 0.0
        self.admission = StartAdmission(self.client, confirm_timeout_s=0.0, clock=lambda: self.now)

    def refused(self, inference: bytes, start: bytes, why: str) -> None:
        with pytest.raises(ChainError) as refusal:
            self.admission.admit(inference, start)
        assert refusal.value.reason == "unpaid" and why in refusal.value.message, refusal.value.message


HOST_KEY = secp256k1.PrivateKey(hashlib.sha256(b"client host").digest())


def start_tx(executor: str, timestamp_ns: int = 123, reassign: bool = False) -> tuple[bytes, bytes]:
    """(inference id, a start — or reassignment — of it signed by the TA naming ``executor``), escrow 10 × 3."""
    the_id = inference_id(bytes(secp256k1.address_bytes(USER.public_key)), b"\x02" * 32, timestamp_ns)
    if reassign:
        message: Message = tx_pb2.MsgReassignInference(ta=address_of(TA), id=the_id, executor=executor)
    else:
        message = tx_pb2.MsgStartInference(
            ta=address_of(TA),
            requester=address_of(USER),
            requester_pubkey=USER.public_key,
            body_hash=b"\x02" * 32,
            timestamp_ns=timestamp_ns,
            signature=b"\x01" * 64,
            model="m@x",
            max_tokens=10,
            fee_per_token=3,
            executor=executor,
            seed=5,
            params_hash=b"\x03" * 32,
        )
    return the_id, sign_tx(TA, [message], "gonka-x", 0, timestamp_ns, Coins(), 200_000)


def test_admission_takes_a_start_for_this_host_that_is_funded() -> None:
    """Three starts of escrow 30 fit a balance of 100 while none is in a block; the fourth does not, until two
    blocks later (their escrows are then in the balance the chain reports)."""
    host = Host(HOST_KEY, spendable=100)
    for i in range(3):
        host.admission.admit(*start_tx(host.client.address, timestamp_ns=100 + i))
    assert len(host.script.sent) == 3  # each went into the host's own node's mempool
    fourth = start_tx(host.client.address, timestamp_ns=200)
    host.refused(*fourth, "hold 90, this one needs 30")
    host.height += 2
    host.now += 1.0  # the admission's next poll of the committed height
    host.admission.admit(*fourth)


def test_admission_refuses_what_no_start_pays_for() -> None:
    host = Host(HOST_KEY, spendable=10**9)
    host.script.answers["Inference"] = RPCError("NOT_FOUND: no inference")  # nor a committed start
    the_id, for_another = start_tx(HOSTS[1])
    host.refused(the_id, for_another, "naming this host")
    own_id, own = start_tx(host.client.address)
    host.refused(b"\x09" * 32, own, "naming this host")  # a start of another inference
    host.refused(own_id, b"", "has not started")  # nor does the chain name this host for it
    host.refused(own_id, b"not a transaction", "naming this host")
    assert host.script.sent == []  # nothing of these reached the node


def test_admission_when_the_node_has_it_already_or_refuses_it() -> None:
    host = Host(HOST_KEY, spendable=10**9)
    the_id, tx = start_tx(host.client.address)

    def broadcast(answer: Any) -> None:
        def send(raw: bytes) -> dict[str, Any]:
            if isinstance(answer, Exception):
                raise answer
            return dict(answer)

        host.client.rpc.broadcast_tx_sync = send  # type: ignore[method-assign]

    broadcast(RPCError("broadcast_tx_sync: Internal error tx already exists in cache"))
    host.admission.admit(the_id, tx)  # in the mempool already (the TA sent it there)
    host.height += 1
    host.now += 1.0  # the admission's next poll of the committed height
    broadcast({"code": 32, "codespace": "sdk", "log": "account sequence mismatch"})  # in a block already
    record = inference_pb2.Inference(id=the_id, status=inference_pb2.STATUS_STARTED, executor=host.client.address)
    host.script.answers["Inference"] = query_pb2.QueryInferenceResponse(inference=record)
    host.admission.admit(the_id, tx)
    for status, executor in (
        (inference_pb2.STATUS_FINISHED, host.client.address),
        (inference_pb2.STATUS_STARTED, HOSTS[1]),
    ):
        host.script.answers["Inference"] = query_pb2.QueryInferenceResponse(
            inference=inference_pb2.Inference(id=the_id, status=status, executor=executor)
        )
        host.refused(the_id, tx, "holds no running one for this host")
    host.script.answers["Inference"] = RPCError("NOT_FOUND: no inference")
    host.refused(the_id, tx, "holds no running one for this host")
    broadcast(RPCError("node unreachable"))
    with pytest.raises(RPCError):
        host.admission.admit(the_id, tx)


def test_admission_waits_for_the_tas_earlier_starts_to_reach_its_node() -> None:
    """Refused for a sequence ahead of the one the node expects (the TA's earlier starts are still on their way
    by gossip), the start is sent again until the node takes it; past ``gap_wait_s`` it is refused."""
    host = Host(HOST_KEY, spendable=10**9)
    host.admission.gap_retry_s = 0.01
    ahead = {"code": 32, "codespace": "sdk", "log": "account sequence mismatch, expected 5, got 7"}
    host.script.broadcasts = [ahead, ahead, {"code": 0, "hash": "AB"}]
    host.admission.admit(*start_tx(host.client.address))
    assert len(host.script.sent) == 3
    host.admission.gap_wait_s = 0.05
    host.script.broadcasts = [ahead] * 100
    host.script.answers["Inference"] = RPCError("NOT_FOUND: no inference")
    host.refused(*start_tx(host.client.address, timestamp_ns=9), "holds no running one for this host")
    assert 3 < len(host.script.sent) < 100


def test_admission_of_a_reassignment_needs_no_funds() -> None:
    host = Host(HOST_KEY, spendable=0)
    host.admission.admit(*start_tx(host.client.address, reassign=True))
    host.refused(*start_tx(HOSTS[1], reassign=True), "naming this host")
    host.refused(*start_tx(host.client.address), "can spend 0")


def test_admission_finds_its_start_in_a_batch() -> None:
    host = Host(HOST_KEY, spendable=30)
    mine_id, mine = start_tx(host.client.address, timestamp_ns=1)
    theirs_id, theirs = start_tx(HOSTS[1], timestamp_ns=2)
    starts = [starts_of(cosmos_tx.TxRaw.FromString(raw))[0] for raw in (theirs, mine)]
    batch = sign_tx(
        TA, [tx_pb2.MsgStartInferences(ta=address_of(TA), starts=starts)], "gonka-x", 0, 7, Coins(), 400_000
    )
    host.admission.admit(mine_id, batch)  # its escrow of 30 fits the balance exactly
    host.refused(theirs_id, batch, "naming this host")
    host.refused(start_tx(host.client.address, timestamp_ns=3)[0], batch, "naming this host")  # not in it


def test_confirm_waits_for_the_committed_start_naming_this_host() -> None:
    """``confirm`` answers from the committed record only: it returns once the application has committed the start
    with this host as executor, and refuses when, ``confirm_blocks`` committed heights on, there is none or it
    names another host (a start refused in its block: funds spent meanwhile, a failed reassignment, a timestamp
    outside the block's window)."""
    host = Host(HOST_KEY, spendable=10**9)
    heights = iter(range(20, 1000))
    host.client.rpc.app_height = lambda: next(heights)  # type: ignore[method-assign]
    host.admission = StartAdmission(host.client, confirm_blocks=3, confirm_poll_s=0.0)
    the_id, _ = start_tx(host.client.address)
    mine = inference_pb2.Inference(
        id=the_id, status=inference_pb2.STATUS_STARTED, executor=host.client.address, max_tokens=10
    )
    answers = [
        RPCError("NOT_FOUND: no inference"),
        RPCError("NOT_FOUND: no inference"),
        query_pb2.QueryInferenceResponse(inference=mine),
    ]

    def answer(request: Message) -> Message:
        next_answer = answers.pop(0)
        if isinstance(next_answer, Exception):
            raise next_answer
        return next_answer

    host.script.answers["Inference"] = answer
    assert host.admission.confirm(the_id) == mine and answers == []
    for status, executor in (
        (inference_pb2.STATUS_STARTED, HOSTS[1]),
        (inference_pb2.STATUS_EXPIRED, host.client.address),
    ):
        host.script.answers["Inference"] = query_pb2.QueryInferenceResponse(
            inference=inference_pb2.Inference(id=the_id, status=status, executor=executor)
        )
        calls = host.script.calls.count("Inference")
        with pytest.raises(ChainError) as refusal:
            host.admission.confirm(the_id)
        assert refusal.value.reason == "unpaid" and executor in refusal.value.message
        assert host.script.calls.count("Inference") - calls == 4  # once at the start, once per new height
    host.script.answers["Inference"] = RPCError("NOT_FOUND: no inference")
    with pytest.raises(ChainError, match="no record"):
        host.admission.confirm(the_id)


class Ledger:
    """``Funds`` over a scripted balance and committed height, counting its reads."""

    def __init__(self, balance: int) -> None:
        self.balance, self.height, self.reads = balance, 10, 0

        def read(address: str, denom: str) -> int:
            self.reads += 1
            return self.balance

        self.funds = Funds(read, lambda: self.height, pending_blocks=2)


def test_funds_read_once_per_committed_height_and_hold_escrows_until_their_block() -> None:
    """The balance is read once per account and committed height; an escrow let through counts against it until a
    balance read two heights later (by then in the chain's own balance); a refusal holds nothing."""
    ledger = Ledger(100)
    funds = ledger.funds
    for _ in range(3):
        assert funds.reserve("alice", "ngonka", 30) is None
    assert funds.spendable("alice", "ngonka") == 10 and ledger.reads == 1
    assert funds.reserve("alice", "ngonka", 30) == (100, 90)  # over-admitting refused, nothing held
    assert funds.reserve("alice", "ngonka", 10) is None and funds.spendable("alice", "ngonka") == 0
    assert funds.spendable("alice", "other") == 100 and ledger.reads == 2  # each denom on its own
    ledger.height, ledger.balance = 11, 10  # block 11 took three escrows: all four still held (one may be later)
    assert funds.spendable("alice", "ngonka") == -90 and ledger.reads == 3
    assert funds.reserve("alice", "ngonka", 1) == (10, 100)
    ledger.height, ledger.balance = 12, 0  # the fourth in block 12: what the chain reports is all there is
    assert funds.spendable("alice", "ngonka") == 0 and ledger.reads == 4
    ledger.balance = 50  # the requester is funded, but the height is the same: no read
    assert funds.reserve("alice", "ngonka", 50) == (0, 0) and ledger.reads == 4
    ledger.height = 13
    assert funds.reserve("alice", "ngonka", 50) is None and ledger.reads == 5


def test_funds_release_and_forget() -> None:
    """A start that did not go out gives its escrow back; accounts holding nothing are forgotten at a new height."""
    ledger = Ledger(100)
    funds = ledger.funds
    assert funds.reserve("alice", "ngonka", 60) is None and funds.reserve("bob", "ngonka", 60) is None
    funds.release("alice", "ngonka", 60)
    assert funds.spendable("alice", "ngonka") == 100 and funds.spendable("bob", "ngonka") == 40
    ledger.height = 11
    assert funds.spendable("carol", "ngonka") == 100
    assert sorted(funds.accounts) == [("bob", "ngonka"), ("carol", "ngonka")]


def test_funds_from_many_threads_never_let_through_more_than_the_balance() -> None:
    ledger = Ledger(1_000)
    with ThreadPoolExecutor(16) as pool:
        held = list(pool.map(lambda _: ledger.funds.reserve("alice", "ngonka", 7) is None, range(400)))
    assert sum(held) == 1_000 // 7 and ledger.funds.spendable("alice", "ngonka") == 1_000 % 7


def test_a_start_the_balance_does_not_cover_is_refused_before_it_goes_out(
    view: tuple[ChainInferenceView, Script],
) -> None:
    """The TA lets a start out only while the balance covers it and the escrows of its starts not in a block yet;
    one CheckTx refused gives its escrow back."""
    chain, script = view
    script.answers["SpendableBalanceByDenom"] = bank_query.QuerySpendableBalanceByDenomResponse(
        balance={"denom": "ngonka", "amount": "70"}
    )
    chain.start_inference(request())  # escrow 10 × 3
    script.broadcasts.append({"code": 13, "codespace": "sdk", "log": "insufficient fee"})
    with pytest.raises(ChainError):
        chain.start_inference(replace(request(), inference_id=b"\x08" * 32))
    chain.start_inference(replace(request(), inference_id=b"\x09" * 32))
    with pytest.raises(ChainError) as refused:
        chain.start_inference(replace(request(), inference_id=b"\x0a" * 32))
    assert refused.value.reason == "insufficient_funds" and "hold 60, this one needs 30" in refused.value.message
    assert len(script.sent) == 3 and chain.spendable(address_of(USER), "ngonka") == 10
    assert script.calls.count("SpendableBalanceByDenom") == 1
    script.height = 12  # type: ignore[attr-defined]
    script.now[0] += 1.0  # type: ignore[attr-defined]
    chain.start_inference(replace(request(), inference_id=b"\x0a" * 32))


def test_admission_sends_a_batch_of_starts_to_its_node_once() -> None:
    """Two starts of one batch naming this host: the transaction goes to the node once, each escrow is held."""
    host = Host(HOST_KEY, spendable=60)
    first_id, first = start_tx(host.client.address, timestamp_ns=1)
    second_id, second = start_tx(host.client.address, timestamp_ns=2)
    starts = [starts_of(cosmos_tx.TxRaw.FromString(raw))[0] for raw in (first, second)]
    batch = sign_tx(
        TA, [tx_pb2.MsgStartInferences(ta=address_of(TA), starts=starts)], "gonka-x", 0, 7, Coins(), 400_000
    )
    host.admission.admit(first_id, batch)
    host.admission.admit(second_id, batch)
    assert len(host.script.sent) == 1
    host.refused(first_id, batch, "hold 60, this one needs 30")  # the same start again: its escrow again
