"""x/inference in process: models registered by the authority only, ML nodes by hosts only, the inference
lifecycle (start: the requester's signed request checked and its escrow held; finish: payment vested to the
executor, the rest refunded, work reported to rewards and committed in block and epoch roots; timeout: the
whole escrow refunded), every refused case with its code and nothing moved, genesis export and import, and a
seeded random run with exact balances. Every invariant (``inference/escrow-held`` and
``inference/index-consistent`` among them) holds after every block: the in-process chain checks them.

Two hosts (KEYS[0], KEYS[1]) registered by gentx; KEYS[2], KEYS[3] request, KEYS[4] and KEYS[6] are Transfer
Agents, KEYS[5] is funded but no host, KEYS[7] is the chain's authority. Block n's time is T0 + n seconds;
epochs are 6 blocks (tests/test_stake.py's SHORT_EPOCHS); no fees and no issuance, so every ngonka is
accounted for.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message
from test_stake import CHAIN, DENOM, FUNDS, GNK, KEYS, events, host_chain

from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.address import module_address
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, merkle, secp256k1
from sdk.crypto.request import inference_id, sign_release, sign_request
from sdk.errors import ABCIError
from sdk.services import gonka
from x.epochs import schedule
from x.inference.msg_server import validate_model, validate_node
from x.inference.types import DEFAULT_VERIFY_THRESHOLD
from x.inference.work import work_leaf

HOST_A, HOST_B, ALICE, BOB, TA, STRANGER, TA2, AUTH = KEYS
QUERY = gonka("inference").query
ESCROW = module_address("inference")
T0 = 1_700_000_000 * 10**9
SHA = hashlib.sha256(b"tiny weights").hexdigest()
MODEL = f"tiny-llama@sha256:{SHA}"
OTHER_SHA = hashlib.sha256(b"other weights").hexdigest()
OTHER = f"other/model-v2@sha256:{OTHER_SHA}"
PRICE = 1_000
COLLATERAL = [100 * GNK, 100 * GNK]
PARAMS = {
    "timeout_blocks": "5",
    "retention_blocks": "20",
    "request_max_age_s": "60",
    "request_max_future_s": "30",
    "max_tokens_limit": "4096",
    "payment_vesting_epochs": 2,
    "denom": DENOM,
    "executor_window_blocks": "3",
}


def addr(key: secp256k1.PrivateKey) -> str:
    return address_of(key)


def raw(key: secp256k1.PrivateKey) -> bytes:
    return secp256k1.address_bytes(key.public_key)


def model(name: str, sha: str, price: int = PRICE, context: int = 2048) -> dict[str, Any]:
    return {
        "id": f"{name}@sha256:{sha}",
        "name": name,
        "weights_sha256": sha,
        "context_length": str(context),
        "price_per_token": str(price),
    }


def node(key: secp256k1.PrivateKey, node_id: str, models: list[str]) -> dict[str, Any]:
    return {
        "operator": addr(key),
        "node_id": node_id,
        "url": f"http://{node_id}.local:8080",
        "models": models,
        "memory_bytes": str(80 * 2**30),
        "bandwidth_bytes_per_s": str(10**9),
        "max_concurrency": 8,
    }


def make_chain(path: Path, **params: Any) -> InProcessChain:
    """Two hosts; MODEL served by HOST_A ("node-a") and HOST_B ("node-b"), OTHER by HOST_B only."""
    section = {
        "params": {**PARAMS, **params},
        "models": [model("tiny-llama", SHA), model("other/model-v2", OTHER_SHA, 5)],
        "nodes": [node(HOST_A, "node-a", [MODEL]), node(HOST_B, "node-b", [MODEL, OTHER])],
    }
    return host_chain(path, COLLATERAL, extra={"inference": section}, authority=raw(AUTH))


def next_time(chain: InProcessChain) -> int:
    return T0 + (chain.height + 1) * 10**9


def block(chain: InProcessChain, txs: list[bytes] = ()) -> abci.ResponseFinalizeBlock:  # type: ignore[assignment]
    return chain.block(list(txs), time_ns=next_time(chain))


def signed(chain: InProcessChain, key: secp256k1.PrivateKey, *msgs: Message) -> bytes:
    account = chain.account(addr(key))
    assert account is not None
    return sign_tx(key, list(msgs), CHAIN, account.account_number, account.sequence, gas_limit=10_000_000)


def deliver(
    chain: InProcessChain, key: secp256k1.PrivateKey, *msgs: Message
) -> tuple[abci.ExecTxResult, abci.ResponseFinalizeBlock]:
    response = block(chain, [signed(chain, key, *msgs)])
    return response.tx_results[0], response


def ok(result: abci.ExecTxResult) -> None:
    assert result.code == 0, result.log


def reply_of(result: abci.ExecTxResult, reply_type: type[Message]) -> Any:
    return reply_type.FromString(abci_types.TxMsgData.FromString(result.data).msg_responses[0].value)


def refused(result: abci.ExecTxResult, codespace: str, code: int, words: str = "") -> None:
    assert (result.codespace, result.code) == (codespace, code), result.log
    assert words in result.log, result.log


def start(
    chain: InProcessChain,
    requester: secp256k1.PrivateKey = ALICE,
    *,
    ta: secp256k1.PrivateKey = TA,
    executor: secp256k1.PrivateKey = HOST_A,
    body: bytes = b'{"messages":[]}',
    timestamp: int | None = None,
    max_tokens: int = 100,
    fee: int = PRICE,
    model_id: str = MODEL,
    signed_for: bytes | None = None,
    pubkey: bytes | None = None,
    seed: int = 42,
) -> tx_pb2.MsgStartInference:
    """A start message for a request signed by ``requester`` for ``ta`` (or ``signed_for``), timestamped at
    the next block's time unless given."""
    ts = next_time(chain) if timestamp is None else timestamp
    return tx_pb2.MsgStartInference(
        ta=addr(ta),
        requester=addr(requester),
        requester_pubkey=pubkey or requester.public_key,
        body_hash=hashlib.sha256(body).digest(),
        timestamp_ns=ts,
        signature=sign_request(requester, body, ts, signed_for or raw(ta)),
        model=model_id,
        max_tokens=max_tokens,
        fee_per_token=fee,
        executor=addr(executor),
        seed=seed,
        params_hash=hashlib.sha256(b"temperature=0").digest(),
    )


def id_of(msg: tx_pb2.MsgStartInference) -> bytes:
    return inference_id(bech32.decode(msg.requester), msg.body_hash, msg.timestamp_ns)


def finish(
    inference: bytes,
    executor: secp256k1.PrivateKey = HOST_A,
    prompt: int = 20,
    completion: int = 30,
    response: bytes = b"the answer",
) -> tx_pb2.MsgFinishInference:
    return tx_pb2.MsgFinishInference(
        executor=addr(executor),
        id=inference,
        response_hash=hashlib.sha256(response).digest(),
        prompt_tokens=prompt,
        completion_tokens=completion,
        logprobs_digest=hashlib.sha256(b"logprobs").digest(),
    )


def assert_batches_refused(
    chain: InProcessChain,
    key: secp256k1.PrivateKey,
    batch: Callable[[list[Any]], Message],
    cases: list[tuple[list[Any], str]],
) -> None:
    """Each batch of ``cases``, signed by ``key`` as one message, is refused whole by CheckTx (inference/18,
    its log naming what is wrong)."""
    for items, words in cases:
        account = chain.account(address_of(key))
        assert account is not None
        tx = sign_tx(key, [batch(items)], CHAIN, account.account_number, account.sequence, gas_limit=100_000_000)
        checked = chain.check(tx)
        assert (checked.codespace, checked.code) == ("inference", 18) and words in checked.log, checked.log


def get(chain: InProcessChain, inference: bytes) -> inference_pb2.Inference:
    return chain.query(
        QUERY + "Inference", query_pb2.QueryInferenceRequest(id=inference.hex()), query_pb2.QueryInferenceResponse
    ).inference


def query_code(chain: InProcessChain, method: str, request: Message) -> tuple[str, int]:
    reply = chain.app.query(abci.RequestQuery(path=QUERY + method, data=request.SerializeToString()))
    return reply.codespace, reply.code


def balances(chain: InProcessChain) -> dict[str, int]:
    return {
        name: chain.balance(raw(key))
        for name, key in (("alice", ALICE), ("bob", BOB), ("host_a", HOST_A), ("host_b", HOST_B), ("ta", TA))
    } | {"escrow": chain.balance(ESCROW)}


def locked(chain: InProcessChain, key: secp256k1.PrivateKey) -> int:
    return dict(chain.app.vesting_keeper.schedule_locked(chain.context(), raw(key))).get(DENOM, 0)


def epoch(chain: InProcessChain) -> int:
    return chain.app.epochs_keeper.current_epoch(chain.context()).number


def until_epoch(chain: InProcessChain, number: int) -> None:
    while epoch(chain) < number:
        block(chain)


# --- models and nodes -------------------------------------------------------------------------------------


def test_models_are_registered_by_the_authority_only(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        sha = hashlib.sha256(b"new").hexdigest()
        new = inference_pb2.Model(
            id=f"Qwen/Qwen3-8B@sha256:{sha}",
            name="Qwen/Qwen3-8B",
            weights_sha256=sha,
            context_length=32768,
            price_per_token=7,
        )
        result, _ = deliver(chain, STRANGER, tx_pb2.MsgRegisterModel(authority=addr(STRANGER), model=new))
        refused(result, "gov", 13, f"expected {addr(AUTH)}, got {addr(STRANGER)}")
        assert query_code(chain, "Model", query_pb2.QueryModelRequest(id=new.id)) == ("sdk", 38)
        bad = {
            "name": dict(name="bad name", id=f"bad name@sha256:{sha}"),
            "sha": dict(weights_sha256=sha.upper(), id=f"Qwen/Qwen3-8B@sha256:{sha.upper()}"),
            "id": dict(id=f"Qwen/Qwen3-8B@sha256:{OTHER_SHA}"),
            "price": dict(price_per_token=0),
            "context": dict(context_length=0),
            "long": dict(name="x" * 65, id=f"{'x' * 65}@sha256:{sha}"),
            "threshold": dict(verify_threshold=1_000_001),
        }
        for what, change in bad.items():
            broken = inference_pb2.Model()
            broken.CopyFrom(new)
            for field, value in change.items():
                setattr(broken, field, value)
            result, _ = deliver(chain, AUTH, tx_pb2.MsgRegisterModel(authority=addr(AUTH), model=broken))
            refused(result, "inference", 2)
            assert query_code(chain, "Model", query_pb2.QueryModelRequest(id=broken.id)) == ("sdk", 38), what
        assert "verify_threshold 1000001 exceeds 1,000,000" in result.log
        result, response = deliver(chain, AUTH, tx_pb2.MsgRegisterModel(authority=addr(AUTH), model=new))
        ok(result)
        assert events(response, "register_model") == [
            {"id": new.id, "context_length": "32768", "price_per_token": "7", "verify_threshold": "800000"}
        ]
        shown = chain.query(QUERY + "Model", query_pb2.QueryModelRequest(id=new.id), query_pb2.QueryModelResponse)
        assert shown.model.verify_threshold == DEFAULT_VERIFY_THRESHOLD  # none set: the default in force
        assert chain.app.inference_keeper.get_model(chain.context(), new.id) == new  # stored as sent: 0
        # an update of the same id replaces it; the threshold may be anything up to 1,000,000 ppm
        for threshold in (1_000_000, 999_999):
            new.price_per_token, new.verify_threshold = 9, threshold
            ok(deliver(chain, AUTH, tx_pb2.MsgRegisterModel(authority=addr(AUTH), model=new))[0])
            assert (
                chain.query(QUERY + "Model", query_pb2.QueryModelRequest(id=new.id), query_pb2.QueryModelResponse).model
                == new
            )
        assert chain.app.inference_keeper.verify_threshold(chain.context(), new.id) == 999_999
        assert chain.app.inference_keeper.verify_threshold(chain.context(), "unknown@sha256:00") == 800_000
        models = chain.query(QUERY + "Models", query_pb2.QueryModelsRequest(), query_pb2.QueryModelsResponse).models
        assert [m.id for m in models] == sorted([MODEL, OTHER, new.id])
        assert {m.id: m.verify_threshold for m in models} == {MODEL: 800_000, OTHER: 800_000, new.id: 999_999}


def test_nodes_are_registered_by_hosts_replaced_and_removed(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:

        def register(
            key: secp256k1.PrivateKey,
            node_id: str,
            models: list[str],
            url: str = "https://n.example:443",
            concurrency: int = 4,
        ) -> abci.ExecTxResult:
            return deliver(
                chain,
                key,
                tx_pb2.MsgRegisterNode(
                    operator=addr(key),
                    node_id=node_id,
                    url=url,
                    models=models,
                    memory_bytes=2**34,
                    bandwidth_bytes_per_s=10**8,
                    max_concurrency=concurrency,
                ),
            )[0]

        def nodes(**request: str) -> list[tuple[str, str, list[str]]]:
            reply = chain.query(QUERY + "Nodes", query_pb2.QueryNodesRequest(**request), query_pb2.QueryNodesResponse)
            return [(n.operator, n.node_id, list(n.models)) for n in reply.nodes]

        before = nodes()
        refused(register(STRANGER, "n1", [MODEL]), "inference", 5, "is not a registered host")
        refused(register(HOST_A, "n1", [f"nope@sha256:{SHA}"]), "inference", 3)
        refused(register(HOST_A, "n1", [MODEL], url="ftp://x"), "inference", 4)
        refused(register(HOST_A, "N1", [MODEL]), "inference", 4)
        refused(register(HOST_A, "n1", [MODEL, MODEL]), "inference", 4)
        refused(register(HOST_A, "n1", []), "inference", 4)
        refused(register(HOST_A, "n1", [MODEL], concurrency=0), "inference", 4)
        assert nodes() == before
        ok(register(HOST_A, "n1", [MODEL]))
        a, b = addr(HOST_A), addr(HOST_B)
        ordered = sorted(
            [(a, "node-a", [MODEL]), (a, "n1", [MODEL]), (b, "node-b", [MODEL, OTHER])],
            key=lambda n: (raw(HOST_A) if n[0] == a else raw(HOST_B), n[1]),
        )
        assert nodes() == ordered
        assert nodes(model=OTHER) == [(b, "node-b", [MODEL, OTHER])]
        assert nodes(operator=a) == [(a, "n1", [MODEL]), (a, "node-a", [MODEL])]
        # replacing moves the node's model index: n1 now serves OTHER only
        ok(register(HOST_A, "n1", [OTHER], url="http://10.0.0.1:9000"))
        assert nodes(model=OTHER, operator=a) == [(a, "n1", [OTHER])]
        assert (a, "n1", [MODEL]) not in nodes(model=MODEL)
        ok(deliver(chain, HOST_A, tx_pb2.MsgRemoveNode(operator=a, node_id="n1"))[0])
        assert nodes() == before
        refused(deliver(chain, HOST_A, tx_pb2.MsgRemoveNode(operator=a, node_id="n1"))[0], "inference", 6)


# --- the lifecycle ------------------------------------------------------------------------------------------


def test_start_finish_escrow_payment_vested_refund_and_work_roots(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        supply = chain.supply()
        before = balances(chain)
        msg = start(chain, max_tokens=300, fee=1_500)
        the_id = id_of(msg)
        result, response = deliver(chain, TA, msg)
        ok(result)
        escrow = 300 * 1_500
        assert reply_of(result, tx_pb2.MsgStartInferenceResponse).id == the_id
        assert events(response, "start_inference") == [
            {
                "id": the_id.hex(),
                "requester": addr(ALICE),
                "ta": addr(TA),
                "executor": addr(HOST_A),
                "model": MODEL,
                "escrow": f"{escrow}ngonka",
                "max_tokens": "300",
                "seed": str(msg.seed),
                "params_hash": msg.params_hash.hex(),
            }
        ]
        after_start = balances(chain)
        assert after_start == {**before, "alice": before["alice"] - escrow, "escrow": escrow}
        record = get(chain, the_id)
        assert (record.status, record.escrow, record.start_height, record.expiry_height) == (
            inference_pb2.STATUS_STARTED,
            escrow,
            chain.height,
            chain.height + 5,
        )
        # the work proof exists only once finished
        assert query_code(chain, "WorkProof", query_pb2.QueryWorkProofRequest(id=the_id.hex())) == ("sdk", 38)

        work_epoch = epoch(chain)
        result, response = deliver(chain, HOST_A, finish(the_id, prompt=40, completion=123))
        ok(result)
        payment, refund = 123 * 1_500, escrow - 123 * 1_500
        reply = reply_of(result, tx_pb2.MsgFinishInferenceResponse)
        assert (reply.payment, reply.refund) == (payment, refund)
        assert events(response, "finish_inference") == [
            {
                "id": the_id.hex(),
                "executor": addr(HOST_A),
                "payment": f"{payment}ngonka",
                "refund": f"{refund}ngonka",
                "prompt_tokens": "40",
                "completion_tokens": "123",
            }
        ]
        assert epoch(chain) == work_epoch, "the test needs start and finish in one epoch"
        assert balances(chain) == {
            **before,
            "alice": before["alice"] - payment,
            "host_a": before["host_a"] + payment,
            "escrow": 0,
        }
        assert chain.supply() == supply
        # the payment is locked in vesting (2 epochs): the host cannot spend it yet
        assert locked(chain, HOST_A) == payment
        # work reported to rewards for this epoch: prompt + completion tokens
        assert chain.app.rewards_keeper.epoch_work(chain.context(), work_epoch) == {raw(HOST_A): 163}
        record = get(chain, the_id)
        assert (
            record.status,
            record.payment,
            record.prompt_tokens,
            record.completion_tokens,
            record.finish_height,
            record.epoch,
            record.work_index,
        ) == (inference_pb2.STATUS_FINISHED, payment, 40, 123, chain.height, work_epoch, 0)
        # the block's root over its one leaf, in state and in the event
        leaf = (
            the_id
            + raw(HOST_A)
            + hashlib.sha256(b"the answer").digest()
            + (40).to_bytes(8, "big")
            + (123).to_bytes(8, "big")
            + payment.to_bytes(8, "big")
        )
        assert work_leaf(record) == leaf
        assert events(response, "work_root") == [
            {"height": str(chain.height), "root": merkle.root([leaf]).hex(), "count": "1"}
        ]
        block_work = chain.query(
            QUERY + "BlockWork", query_pb2.QueryBlockWorkRequest(height=chain.height), query_pb2.QueryBlockWorkResponse
        ).work
        assert (block_work.root, block_work.count) == (merkle.root([leaf]), 1)
        assert query_code(chain, "BlockWork", query_pb2.QueryBlockWorkRequest(height=chain.height - 1)) == ("sdk", 38)

        # a second inference by the same host in the epoch, from BOB through the other TA
        msg2 = start(chain, BOB, ta=TA2, max_tokens=10, body=b"second")
        ok(deliver(chain, TA2, msg2)[0])
        ok(deliver(chain, HOST_A, finish(id_of(msg2), prompt=1, completion=10, response=b"two"))[0])
        leaf2 = work_leaf(get(chain, id_of(msg2)))
        # before the epoch ends: the proof is over the leaves so far, not final
        proof = chain.query(
            QUERY + "WorkProof", query_pb2.QueryWorkProofRequest(id=the_id.hex()), query_pb2.QueryWorkProofResponse
        )
        assert not proof.final and proof.root == merkle.root([leaf, leaf2]) and proof.total == 2
        running = chain.query(
            QUERY + "EpochWork",
            query_pb2.QueryEpochWorkRequest(epoch=work_epoch, host=addr(HOST_A)),
            query_pb2.QueryEpochWorkResponse,
        ).work
        assert (running.units, running.count, running.final, running.root) == (
            174,
            2,
            False,
            merkle.root([leaf, leaf2]),
        )

        # the epoch ends: the host's epoch root is stored, final; the inference proves into it
        until_epoch(chain, work_epoch + 1)
        work = chain.query(
            QUERY + "EpochWork",
            query_pb2.QueryEpochWorkRequest(epoch=work_epoch, host=addr(HOST_A)),
            query_pb2.QueryEpochWorkResponse,
        ).work
        assert (work.units, work.count, work.final, work.root) == (174, 2, True, merkle.root([leaf, leaf2]))
        for inference, index, expected in ((the_id, 0, leaf), (id_of(msg2), 1, leaf2)):
            proof = chain.query(
                QUERY + "WorkProof",
                query_pb2.QueryWorkProofRequest(id=inference.hex()),
                query_pb2.QueryWorkProofResponse,
            )
            assert (proof.leaf, proof.index, proof.total, proof.final, proof.root) == (
                expected,
                index,
                2,
                True,
                work.root,
            )
            assert merkle.verify_inclusion(work.root, proof.leaf, proof.index, proof.total, list(proof.proof))
            tampered = bytearray(proof.leaf)
            tampered[-1] ^= 1  # one ngonka more paid
            assert not merkle.verify_inclusion(work.root, bytes(tampered), proof.index, proof.total, list(proof.proof))
            assert not merkle.verify_inclusion(work.root, proof.leaf, 1 - index, proof.total, list(proof.proof))
        assert query_code(chain, "EpochWork", query_pb2.QueryEpochWorkRequest(epoch=work_epoch, host=addr(HOST_B))) == (
            "sdk",
            38,
        )
        # vesting releases the payment over the next 2 epoch starts: ⌊p/2⌋ + remainder, then ⌊p/2⌋
        payments = (payment, 10 * PRICE)
        total = sum(payments)
        assert locked(chain, HOST_A) == total - sum(p // 2 + p % 2 for p in payments)
        until_epoch(chain, work_epoch + 2)
        assert locked(chain, HOST_A) == 0
        assert chain.balance(raw(HOST_A)) == before["host_a"] + total
        assert chain.supply() == supply
        # queries by requester and executor, in start order
        by_exec = chain.query(
            QUERY + "Inferences",
            query_pb2.QueryInferencesRequest(executor=addr(HOST_A)),
            query_pb2.QueryInferencesResponse,
        ).inferences
        assert [i.id for i in by_exec] == [the_id, id_of(msg2)]
        by_req = chain.query(
            QUERY + "Inferences",
            query_pb2.QueryInferencesRequest(requester=addr(BOB)),
            query_pb2.QueryInferencesResponse,
        ).inferences
        assert [i.id for i in by_req] == [id_of(msg2)]
        assert query_code(chain, "Inferences", query_pb2.QueryInferencesRequest()) == ("sdk", 18)


def test_timeout_refunds_the_whole_escrow_then_the_record_is_pruned(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        supply, before = chain.supply(), balances(chain)
        msg = start(chain, BOB, executor=HOST_B, model_id=OTHER, fee=5, max_tokens=4096)
        ok(deliver(chain, TA, msg)[0])
        started = chain.height
        assert balances(chain) == {**before, "bob": before["bob"] - 5 * 4096, "escrow": 5 * 4096}
        expired = None
        while chain.height < started + 5:
            response = block(chain)
            found = events(response, "expire_inference")
            if found:
                expired = (chain.height, found)
        assert expired == (
            started + 5,
            [{"id": id_of(msg).hex(), "requester": addr(BOB), "executor": addr(HOST_B), "refund": f"{5 * 4096}ngonka"}],
        )
        assert balances(chain) == before and chain.supply() == supply
        record = get(chain, id_of(msg))
        assert (record.status, record.finish_height, record.prune_height) == (
            inference_pb2.STATUS_EXPIRED,
            started + 5,
            started + 25,
        )
        # too late to finish: nothing paid
        refused(deliver(chain, HOST_B, finish(id_of(msg), HOST_B, completion=1))[0], "inference", 16, "STATUS_EXPIRED")
        assert balances(chain) == before
        while chain.height < started + 25:
            block(chain)
        assert query_code(chain, "Inference", query_pb2.QueryInferenceRequest(id=id_of(msg).hex())) == ("sdk", 38)
        assert (
            chain.query(
                QUERY + "Inferences",
                query_pb2.QueryInferencesRequest(requester=addr(BOB)),
                query_pb2.QueryInferencesResponse,
            ).inferences
            == []
        )
        items = [
            k
            for k, _ in chain.app.store.items_at(chain.height)
            if k.startswith(b"inference/")
            and k[len(b"inference/") :][:1] in (b"\x01", b"\x02", b"\x03", b"\x04", b"\x05")
        ]
        assert items == []


# --- refused -------------------------------------------------------------------------------------------------


def test_refused_starts_and_finishes_change_nothing(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", timeout_blocks="100") as chain:
        supply = chain.supply()
        replay = start(chain, body=b"replayed")
        ok(deliver(chain, TA, replay)[0])
        fixed = {**balances(chain)}
        cases: list[tuple[str, Any, str, int, str]] = []

        def case(name: str, make: Any, codespace: str, code: int, words: str = "") -> None:
            cases.append((name, make, codespace, code, words))

        def bad_signature() -> tx_pb2.MsgStartInference:
            msg = start(chain)
            msg.signature = sign_request(ALICE, b"another body", msg.timestamp_ns, raw(TA))
            return msg

        case("bad signature", bad_signature, "inference", 7)
        case("signed for another TA", lambda: start(chain, signed_for=raw(TA2)), "inference", 7, addr(TA))
        case("another requester's key", lambda: start(chain, pubkey=BOB.public_key), "inference", 17)
        case("stale", lambda: start(chain, timestamp=next_time(chain) - 61 * 10**9), "inference", 8, "60s before")
        case("future", lambda: start(chain, timestamp=next_time(chain) + 31 * 10**9), "inference", 8, "30s after")
        case("replayed", lambda: replay, "inference", 9, id_of(replay).hex())
        case(
            "failover through another TA on other terms",
            lambda: start(chain, ta=TA2, body=b"replayed", timestamp=replay.timestamp_ns, fee=PRICE + 1),
            "inference",
            9,
        )
        case("no funds", lambda: start(chain, max_tokens=4096, fee=FUNDS // 4096 + 1), "sdk", 5, "spendable")
        case("unknown model", lambda: start(chain, model_id=f"nope@sha256:{SHA}"), "inference", 3)
        case("fee below price", lambda: start(chain, fee=PRICE - 1), "inference", 10)
        case("executor not a host", lambda: start(chain, executor=STRANGER), "inference", 5)
        case("executor not serving", lambda: start(chain, executor=HOST_A, model_id=OTHER, fee=5), "inference", 11)
        case("max tokens over the limit", lambda: start(chain, max_tokens=4097), "inference", 12)
        case("zero max tokens", lambda: start(chain, max_tokens=0), "inference", 12)
        for name, make, codespace, code, words in cases:
            msg = make()
            signer = TA2 if msg.ta == addr(TA2) else TA
            result, response = deliver(chain, signer, msg)
            assert (result.codespace, result.code) == (codespace, code), (name, result.log)
            assert words in result.log, (name, result.log)
            assert balances(chain) == fixed and chain.supply() == supply, name
            assert not events(response, "start_inference"), name
        # the window's edges are inside it
        for offset in (-60 * 10**9, 30 * 10**9):
            msg = start(chain, timestamp=next_time(chain) + offset, body=str(offset).encode(), max_tokens=1)
            ok(deliver(chain, TA, msg)[0])
        escrow = chain.balance(ESCROW)
        assert escrow == 100 * PRICE + 2 * PRICE
        fixed = balances(chain)

        the_id = id_of(replay)
        for name, msg, signer, codespace, code in (
            ("not the executor", finish(the_id, HOST_B), HOST_B, "inference", 14),
            ("completion over max_tokens", finish(the_id, completion=101), HOST_A, "inference", 15),
            ("prompt over the context", finish(the_id, prompt=2049), HOST_A, "inference", 15),
            ("no tokens", finish(the_id, prompt=0, completion=0), HOST_A, "inference", 18),
            ("unknown id", finish(b"\x01" * 32), HOST_A, "inference", 13),
        ):
            result, _ = deliver(chain, signer, msg)
            assert (result.codespace, result.code) == (codespace, code), (name, result.log)
            assert balances(chain) == fixed, name
        assert get(chain, the_id).status == inference_pb2.STATUS_STARTED
        ok(deliver(chain, HOST_A, finish(the_id, completion=100))[0])  # all of max_tokens: nothing refunded
        assert chain.balance(raw(HOST_A)) == fixed["host_a"] + 100 * PRICE
        assert chain.balance(raw(ALICE)) == fixed["alice"]
        done = balances(chain)
        result, _ = deliver(chain, HOST_A, finish(the_id, completion=1))
        refused(result, "inference", 16, "STATUS_FINISHED")
        assert balances(chain) == done and chain.supply() == supply


def reassign(
    inference: bytes,
    executor: secp256k1.PrivateKey,
    ta: secp256k1.PrivateKey = TA,
    released_by: secp256k1.PrivateKey | None = None,
) -> tx_pb2.MsgReassignInference:
    """The reassignment; with ``released_by``'s release (the old executor's, when honest)."""
    if released_by is None:
        return tx_pb2.MsgReassignInference(ta=addr(ta), id=inference, executor=addr(executor))
    return tx_pb2.MsgReassignInference(
        ta=addr(ta),
        id=inference,
        executor=addr(executor),
        release=sign_release(released_by, inference),
        release_pubkey=released_by.public_key,
    )


def test_reassignment_by_the_starting_ta_moves_the_executor_and_keeps_the_escrow(tmp_path: Path) -> None:
    """A TA whose chosen node failed before any token gives the inference to another host serving the model,
    with that host's release: at once, the escrow stays, the old executor can no longer finish it, the new one
    can. Without the release, or with one the executor did not sign, it is refused inside the executor's window
    (its answer may be on its way). Every refused reassignment leaves the record, its indexes and the balances
    as they were."""
    with make_chain(tmp_path / "db", timeout_blocks="100") as chain:
        supply = chain.supply()
        msg = start(chain, max_tokens=50, body=b"to be reassigned")
        ok(deliver(chain, TA, msg)[0])
        the_id = id_of(msg)
        other = start(chain, BOB, executor=HOST_B, model_id=OTHER, fee=5, body=b"other model")
        ok(deliver(chain, TA, other)[0])
        before, record = balances(chain), get(chain, the_id)
        assert (record.executor, record.escrow) == (addr(HOST_A), 50 * PRICE)

        def by_executor(key: secp256k1.PrivateKey) -> list[bytes]:
            return [
                i.id
                for i in chain.query(
                    QUERY + "Inferences",
                    query_pb2.QueryInferencesRequest(executor=addr(key)),
                    query_pb2.QueryInferencesResponse,
                ).inferences
            ]

        for name, message, signer, codespace, code, words in (
            ("no release, inside the window", reassign(the_id, HOST_B), TA, "inference", 20, addr(HOST_A)),
            ("another TA", reassign(the_id, HOST_B, TA2), TA2, "inference", 19, addr(TA)),
            ("to a non-host", reassign(the_id, STRANGER), TA, "inference", 5, addr(STRANGER)),
            ("to a host not serving the model", reassign(id_of(other), HOST_A), TA, "inference", 11, OTHER),
            ("to the executor itself", reassign(the_id, HOST_A), TA, "inference", 18, "already the executor"),
            ("unknown id", reassign(b"\x02" * 32, HOST_B), TA, "inference", 13, ""),
            ("a short id", reassign(b"\x02" * 31, HOST_B), TA, "inference", 18, "id must be 32 bytes"),
            (
                "released by another host",
                reassign(the_id, HOST_B, released_by=HOST_B),
                TA,
                "inference",
                21,
                addr(HOST_B),
            ),
            (
                "a release of another inference",
                tx_pb2.MsgReassignInference(
                    ta=addr(TA),
                    id=the_id,
                    executor=addr(HOST_B),
                    release=sign_release(HOST_A, id_of(other)),
                    release_pubkey=HOST_A.public_key,
                ),
                TA,
                "inference",
                21,
                "not a valid signature",
            ),
        ):
            result, response = deliver(chain, signer, message)
            assert (result.codespace, result.code) == (codespace, code), (name, result.log)
            assert words in result.log, (name, result.log)
            assert not events(response, "reassign_inference"), name
            assert balances(chain) == before and chain.supply() == supply, name
            assert get(chain, the_id) == record, name
            assert get(chain, id_of(other)).executor == addr(HOST_B), name
        assert by_executor(HOST_A) == [the_id] and by_executor(HOST_B) == [id_of(other)]

        result, response = deliver(chain, TA, reassign(the_id, HOST_B, released_by=HOST_A))
        ok(result)
        assert events(response, "reassign_inference") == [
            {"id": the_id.hex(), "ta": addr(TA), "previous": addr(HOST_A), "executor": addr(HOST_B)}
        ]
        moved = get(chain, the_id)
        expected = inference_pb2.Inference()
        expected.CopyFrom(record)
        expected.executor = addr(HOST_B)
        expected.assigned_height = chain.height
        assert moved == expected  # same escrow, fee, start and expiry heights: only the executor changed
        assert balances(chain) == before and chain.supply() == supply
        assert by_executor(HOST_A) == [] and by_executor(HOST_B) == [the_id, id_of(other)]

        # the old executor can no longer finish it; the new one is paid
        refused(deliver(chain, HOST_A, finish(the_id, HOST_A))[0], "inference", 14, "not the executor")
        assert balances(chain) == before
        ok(deliver(chain, HOST_B, finish(the_id, HOST_B, completion=30))[0])
        assert chain.balance(raw(HOST_B)) == before["host_b"] + 30 * PRICE
        assert chain.balance(raw(ALICE)) == before["alice"] + 20 * PRICE
        # a finished inference is not reassigned
        done, finished = balances(chain), get(chain, the_id)
        refused(deliver(chain, TA, reassign(the_id, HOST_A))[0], "inference", 16, "STATUS_FINISHED")
        assert balances(chain) == done and get(chain, the_id) == finished and chain.supply() == supply


def test_an_executor_keeps_its_inference_for_its_window_and_its_finish_stands_after(tmp_path: Path) -> None:
    """Without a release, a reassignment (or take-over) waits for the executor's window, and even then the old
    executor's finish stands: the answer it was giving is paid if it lands first, once, and the new executor's
    finish is then refused (the requester's TA cannot void a host's work in flight)."""
    with make_chain(tmp_path / "db", timeout_blocks="100") as chain:
        supply = chain.supply()
        msg = start(chain, max_tokens=50, body=b"in flight")
        ok(deliver(chain, TA, msg)[0])
        the_id, before = id_of(msg), balances(chain)
        assigned = get(chain, the_id).assigned_height
        while chain.height < assigned + 2:
            refused(deliver(chain, TA, reassign(the_id, HOST_B))[0], "inference", 20, f"until height {assigned + 3}")
        assert get(chain, the_id).executor == addr(HOST_A)
        ok(deliver(chain, TA, reassign(the_id, HOST_B))[0])  # the window is over
        moved = get(chain, the_id)
        assert (moved.executor, moved.previous_executor, moved.assigned_height) == (
            addr(HOST_B),
            addr(HOST_A),
            chain.height,
        )
        ok(deliver(chain, HOST_A, finish(the_id, HOST_A, completion=20))[0])  # its answer landed first: paid
        done = get(chain, the_id)
        assert (done.status, done.executor, done.previous_executor, done.payment) == (
            inference_pb2.STATUS_FINISHED,
            addr(HOST_A),
            "",
            20 * PRICE,
        )
        refused(deliver(chain, HOST_B, finish(the_id, HOST_B, completion=20))[0], "inference", 14, "not the executor")
        assert chain.balance(raw(HOST_A)) == before["host_a"] + 20 * PRICE
        assert chain.balance(raw(HOST_B)) == before["host_b"]
        assert chain.balance(raw(ALICE)) == before["alice"] + 30 * PRICE and chain.supply() == supply


# --- params, genesis -------------------------------------------------------------------------------------------


def test_a_client_failing_over_to_another_ta_hands_the_inference_over_without_a_second_escrow(
    tmp_path: Path,
) -> None:
    """The same request (same body and timestamp: the same id) signed for another TA after the first one died:
    inside the executor's window it is refused (the first host may be answering it: one payment, one answer);
    after, the started inference passes to the new TA and executor; nothing more is escrowed; the old TA loses
    it, and the old executor only keeps its finish; once finished, a further copy is a duplicate."""
    with make_chain(tmp_path / "db", timeout_blocks="100") as chain:
        supply = chain.supply()
        first = start(chain, max_tokens=40, body=b"failing over")
        ok(deliver(chain, TA, first)[0])
        the_id, before = id_of(first), balances(chain)
        again = start(chain, ta=TA2, executor=HOST_B, max_tokens=40, body=b"failing over", timestamp=first.timestamp_ns)
        assert id_of(again) == the_id and again.signature != first.signature
        record = get(chain, the_id)
        while chain.height < record.assigned_height + 2:
            refused(deliver(chain, TA2, again)[0], "inference", 20, addr(HOST_A))
            assert get(chain, the_id) == record and balances(chain) == before
        result, response = deliver(chain, TA2, again)
        ok(result)
        assert events(response, "take_over_inference") == [
            {
                "id": the_id.hex(),
                "previous_ta": addr(TA),
                "ta": addr(TA2),
                "previous_executor": addr(HOST_A),
                "executor": addr(HOST_B),
            }
        ]
        assert not events(response, "start_inference")
        record = get(chain, the_id)
        assert (record.ta, record.executor, record.escrow) == (addr(TA2), addr(HOST_B), 40 * PRICE)
        assert balances(chain) == before and chain.supply() == supply  # escrowed once
        assert record.previous_executor == addr(HOST_A)  # its finish would still stand
        refused(deliver(chain, TA, reassign(the_id, HOST_A))[0], "inference", 19, addr(TA2))
        refused(deliver(chain, STRANGER, finish(the_id, STRANGER))[0], "inference", 14, "not the executor")
        refused(deliver(chain, TA2, again)[0], "inference", 9, the_id.hex())  # the same TA again
        ok(deliver(chain, HOST_B, finish(the_id, HOST_B, completion=10))[0])
        assert chain.balance(raw(ALICE)) == before["alice"] + 30 * PRICE  # refunded once, the rest paid
        assert chain.balance(ESCROW) == before["escrow"] - 40 * PRICE
        back = start(chain, max_tokens=40, body=b"failing over", timestamp=first.timestamp_ns)
        refused(deliver(chain, TA, back)[0], "inference", 9, the_id.hex())  # finished: never again
        assert chain.supply() == supply


def test_params_by_the_authority_and_export_import_round_trip(tmp_path: Path) -> None:
    with make_chain(tmp_path / "old") as chain:
        params = inference_pb2.Params(
            **{**{k: int(v) for k, v in PARAMS.items() if k != "denom"}, "denom": DENOM, "timeout_blocks": 50}
        )
        refused(deliver(chain, STRANGER, tx_pb2.MsgUpdateParams(authority=addr(STRANGER), params=params))[0], "gov", 13)
        bad = inference_pb2.Params()
        bad.CopyFrom(params)
        bad.retention_blocks = 0
        refused(deliver(chain, AUTH, tx_pb2.MsgUpdateParams(authority=addr(AUTH), params=bad))[0], "sdk", 18)
        ok(deliver(chain, AUTH, tx_pb2.MsgUpdateParams(authority=addr(AUTH), params=params))[0])
        assert (
            chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params
            == params
        )
        strict = inference_pb2.Model()
        strict.CopyFrom(chain.app.inference_keeper.get_model(chain.context(), OTHER))
        strict.verify_threshold = 950_000
        ok(deliver(chain, AUTH, tx_pb2.MsgRegisterModel(authority=addr(AUTH), model=strict))[0])
        done, pending = start(chain, body=b"done"), start(chain, BOB, executor=HOST_B, body=b"pending")
        ok(deliver(chain, TA, done, pending)[0])
        ok(deliver(chain, HOST_A, finish(id_of(done)))[0])
        while schedule.next_epoch_height(chain.app.epochs_keeper.current_epoch(chain.context())) == chain.height + 1:
            block(chain)  # so that the new chain's first block ends no epoch, and exports the same
        exported = chain.app.export_app_state()
        section = exported["inference"]
        assert len(section["inferences"]) == 2 and len(section["models"]) == 2 and len(section["nodes"]) == 2
        assert len(section["block_work"]) == 1 and len(section["epoch_work"]) == 1 and len(section["leaves"]) == 1
        thresholds = {m["id"]: m.get("verify_threshold") for m in section["models"]}
        assert thresholds == {MODEL: None, OTHER: 950_000}  # kept as stored: 0 (the default) is left out
        height, escrow = chain.height, chain.balance(ESCROW)
        assert escrow == 100 * PRICE
        # an escrow that does not match the started inferences is refused
        broken = json.loads(json.dumps(exported))
        broken["inference"]["inferences"] = [
            i for i in broken["inference"]["inferences"] if i["status"] != "STATUS_STARTED"
        ]
        with pytest.raises(ValueError, match="inference account holds 100000ngonka but started inferences escrow 0"):
            InProcessChain(
                tmp_path / "broken",
                {},
                chain_id=CHAIN,
                app_state=broken,
                initial_height=height + 1,
                authority=raw(AUTH),
            )
    with InProcessChain(
        tmp_path / "new",
        {},
        chain_id=CHAIN,
        app_state=json.loads(json.dumps(exported)),
        initial_height=height + 1,
        authority=raw(AUTH),
    ) as new:
        assert new.app.export_app_state()["inference"] == exported["inference"]
        assert new.app.inference_keeper.verify_threshold(new.context(), OTHER) == 950_000
        assert new.balance(ESCROW) == escrow
        # the chain goes on: the pending inference finishes and proves into its epoch
        ok(deliver(new, HOST_B, finish(id_of(pending), HOST_B, completion=7))[0])
        assert new.balance(ESCROW) == 0
        proof = new.query(
            QUERY + "WorkProof", query_pb2.QueryWorkProofRequest(id=id_of(done).hex()), query_pb2.QueryWorkProofResponse
        )
        assert merkle.verify_inclusion(proof.root, proof.leaf, proof.index, proof.total, list(proof.proof))


# --- a seeded random run -------------------------------------------------------------------------------------


def test_seeded_random_run_with_exact_balances(tmp_path: Path) -> None:
    rng = random.Random(15)
    requesters, hosts, tas = [ALICE, BOB], [HOST_A, HOST_B], [TA, TA2]
    with make_chain(tmp_path / "db") as chain:
        supply = chain.supply()
        expected = {raw(k): chain.balance(raw(k)) for k in requesters + hosts + tas}
        escrow = 0
        live: dict[bytes, tuple[tx_pb2.MsgStartInference, int]] = {}  # id -> (message, expiry height)
        leaves: dict[bytes, bytes] = {}
        finished_at: dict[bytes, int] = {}  # id -> the height of its finish
        units: dict[tuple[int, bytes], int] = {}
        counts = {"started": 0, "finished": 0, "expired": 0}
        body = 0
        while counts["started"] < 50 or live:
            height = chain.height + 1
            starts: dict[bytes, list[tx_pb2.MsgStartInference]] = {}
            for _ in range(min(rng.randrange(0, 4), 50 - counts["started"] - sum(map(len, starts.values())))):
                requester, executor = rng.choice(requesters), rng.choice(hosts)
                model_id, price = rng.choice([(MODEL, PRICE)] + ([(OTHER, 5)] if executor == HOST_B else []))
                body += 1
                msg = start(
                    chain,
                    requester,
                    ta=(ta := rng.choice(tas)),
                    executor=executor,
                    body=str(body).encode(),
                    max_tokens=rng.randrange(1, 4097),
                    fee=price + rng.randrange(0, 3),
                    model_id=model_id,
                    timestamp=next_time(chain) - rng.randrange(0, 60 * 10**9),
                )
                starts.setdefault(raw(ta), []).append(msg)
            finishes: dict[bytes, list[tx_pb2.MsgFinishInference]] = {}
            for the_id in sorted(live):
                msg, expiry = live[the_id]
                if expiry >= height and rng.random() < 0.3:
                    finishes.setdefault(bech32.decode(msg.executor), []).append(
                        finish(
                            the_id,
                            [k for k in hosts if addr(k) == msg.executor][0],
                            prompt=rng.randrange(0, 2049),
                            completion=rng.randrange(0, msg.max_tokens + 1),
                            response=the_id + b"r",
                        )
                    )
            for msgs in finishes.values():  # a finish needs some tokens
                for f in msgs:
                    if f.prompt_tokens + f.completion_tokens == 0:
                        f.prompt_tokens = 1
            txs = [signed(chain, k, *starts[raw(k)]) for k in tas if raw(k) in starts]
            txs += [signed(chain, k, *finishes[raw(k)]) for k in hosts if raw(k) in finishes]
            response = block(chain, txs)
            assert all(r.code == 0 for r in response.tx_results), [r.log for r in response.tx_results]
            current = epoch(chain)
            for msgs in starts.values():
                for msg in msgs:
                    cost = msg.max_tokens * msg.fee_per_token
                    expected[bech32.decode(msg.requester)] -= cost
                    escrow += cost
                    live[id_of(msg)] = (msg, height + 5)
                    counts["started"] += 1
            block_leaves = []
            for host in [raw(k) for k in hosts]:
                for f in finishes.get(host, []):
                    msg, _ = live.pop(f.id)
                    payment = f.completion_tokens * msg.fee_per_token
                    expected[host] += payment
                    expected[bech32.decode(msg.requester)] += msg.max_tokens * msg.fee_per_token - payment
                    escrow -= msg.max_tokens * msg.fee_per_token
                    leaf = (
                        f.id
                        + host
                        + f.response_hash
                        + f.prompt_tokens.to_bytes(8, "big")
                        + f.completion_tokens.to_bytes(8, "big")
                        + payment.to_bytes(8, "big")
                    )
                    leaves[f.id] = leaf
                    finished_at[f.id] = height
                    block_leaves.append(leaf)
                    units[(current, host)] = units.get((current, host), 0) + f.prompt_tokens + f.completion_tokens
                    counts["finished"] += 1
            expiring = sorted(the_id for the_id, (_, expiry) in live.items() if expiry == height)
            for the_id in expiring:
                msg, _ = live.pop(the_id)
                cost = msg.max_tokens * msg.fee_per_token
                expected[bech32.decode(msg.requester)] += cost
                escrow -= cost
                counts["expired"] += 1
            assert [e["id"] for e in events(response, "expire_inference")] == [i.hex() for i in expiring]
            if block_leaves:
                assert events(response, "work_root") == [
                    {"height": str(height), "root": merkle.root(block_leaves).hex(), "count": str(len(block_leaves))}
                ]
            else:
                assert not events(response, "work_root")
            assert {a: chain.balance(a) for a in expected} == expected
            assert chain.balance(ESCROW) == escrow and chain.supply() == supply
        assert counts["started"] == 50 and counts["finished"] > 10 and counts["expired"] > 5, counts
        until_epoch(chain, epoch(chain) + 1)
        for (number, host), total in units.items():
            work = chain.query(
                QUERY + "EpochWork",
                query_pb2.QueryEpochWorkRequest(epoch=number, host=bech32.encode(host)),
                query_pb2.QueryEpochWorkResponse,
            ).work
            assert work.final and work.units == total
        # a finished record is kept retention_blocks after its finish: pruned in the block at finish height + that
        retention = int(PARAMS["retention_blocks"])
        kept = {the_id for the_id, at in finished_at.items() if at + retention > chain.height}
        assert kept, f"no finished inference is still kept at height {chain.height}: nothing left to prove"
        verified = 0
        for the_id, leaf in sorted(leaves.items()):
            record = chain.app.inference_keeper.get_inference(chain.context(), the_id)
            assert (record is not None) == (the_id in kept), (the_id.hex(), finished_at[the_id], chain.height)
            if record is None:
                assert query_code(chain, "WorkProof", query_pb2.QueryWorkProofRequest(id=the_id.hex())) == ("sdk", 38)
                continue
            proof = chain.query(
                QUERY + "WorkProof", query_pb2.QueryWorkProofRequest(id=the_id.hex()), query_pb2.QueryWorkProofResponse
            )
            assert proof.leaf == leaf and proof.final
            assert merkle.verify_inclusion(proof.root, leaf, proof.index, proof.total, list(proof.proof))
            verified += 1
        assert verified == len(kept) > 0


def test_cli_commands_parse() -> None:
    from gonkad.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(
        [
            "tx",
            "inference",
            "register-node",
            "node-a",
            "http://127.0.0.1:8080",
            "--models",
            MODEL,
            "--max-concurrency",
            "4",
            "--from",
            "val0",
        ]
    )
    assert (args.node_id, args.url, args.models, args.max_concurrency) == (
        "node-a",
        "http://127.0.0.1:8080",
        MODEL,
        "4",
    )
    for argv in (
        ["tx", "inference", "remove-node", "node-a", "--from", "val0"],
        ["tx", "inference", "update-params", "p.json", "--from", "val0"],
        [
            "tx",
            "inference",
            "register-model",
            "m",
            SHA,
            "--context-length",
            "8",
            "--price-per-token",
            "1",
            "--verify-threshold",
            "900000",
            "--from",
            "val0",
        ],  # fmt: skip
        ["query", "inference", "models"],
        ["query", "inference", "model", MODEL],
        ["query", "inference", "nodes", "--model", MODEL],
        ["query", "inference", "inference", "00" * 32],
        ["query", "inference", "inferences", "--requester", addr(ALICE)],
        ["query", "inference", "work", "3", addr(HOST_A)],
        ["query", "inference", "block-work", "9"],
        ["query", "inference", "work-proof", "00" * 32],
        ["query", "inference", "params"],
        ["agent", "start", "--from", "val0", "--ta", "http://a", "--ta", "http://b"],
    ):
        assert callable(parser.parse_args(argv).func), argv


def test_governance_registers_a_model(tmp_path: Path) -> None:
    """With the default authority (governance's account), a passed proposal carries MsgRegisterModel."""
    from test_gov import AUTHORITY as GOV
    from test_gov import VALIDATORS, YES, GovChain

    sha = hashlib.sha256(b"gov weights").hexdigest()
    new = inference_pb2.Model(
        id=f"gov-model@sha256:{sha}",
        name="gov-model",
        weights_sha256=sha,
        context_length=4096,
        price_per_token=3,
        verify_threshold=900_000,
    )
    with GovChain(tmp_path / "db") as chain:
        pid = chain.submit(VALIDATORS[0], [tx_pb2.MsgRegisterModel(authority=GOV, model=new)])
        for key in VALIDATORS:
            assert chain.vote(key, pid, YES).code == 0
        chain.end_voting()
        assert (
            chain.query(QUERY + "Model", query_pb2.QueryModelRequest(id=new.id), query_pb2.QueryModelResponse).model
            == new
        )


def test_a_batch_of_starts_judges_each_on_its_own(tmp_path: Path) -> None:
    """``MsgStartInferences``: the starts that can go on start, with their escrows and events; one whose escrow
    the requester cannot pay, one of an unknown model and a repeat of the first are left out with their codes,
    and leave nothing behind. A start of another TA, or an empty or oversized batch, refuses the whole message
    before it runs."""
    with make_chain(tmp_path / "db") as chain:
        supply, before = chain.supply(), balances(chain)
        good = [start(chain, body=b"batch one", max_tokens=10), start(chain, BOB, body=b"batch two", max_tokens=20)]
        broke = start(chain, body=b"too dear", max_tokens=10, fee=FUNDS)
        unknown = start(chain, body=b"unknown", model_id=f"nope@sha256:{SHA}")
        batch = tx_pb2.MsgStartInferences(ta=addr(TA), starts=[good[0], broke, unknown, good[1], good[0]])
        result, response = deliver(chain, TA, batch)
        ok(result)
        reply = reply_of(result, tx_pb2.MsgStartInferencesResponse)
        assert [(r.codespace, r.code) for r in reply.results] == [
            ("", 0),
            ("sdk", 5),
            ("inference", 3),
            ("", 0),
            ("inference", 9),
        ]
        assert [(r.id, r.escrow) for r in reply.results if r.code == 0] == [
            (id_of(good[0]), 10 * PRICE),
            (id_of(good[1]), 20 * PRICE),
        ]
        assert "insufficient funds" in reply.results[1].log and "not registered" in reply.results[2].log
        assert [e["id"] for e in events(response, "start_inference")] == [id_of(m).hex() for m in good]
        assert get(chain, id_of(good[1])).status == inference_pb2.STATUS_STARTED
        assert query_code(chain, "Inference", query_pb2.QueryInferenceRequest(id=id_of(broke).hex())) == ("sdk", 38)
        after = balances(chain)
        assert (after["alice"], after["bob"], after["escrow"]) == (
            before["alice"] - 10 * PRICE,
            before["bob"] - 20 * PRICE,
            before["escrow"] + 30 * PRICE,
        )
        assert chain.supply() == supply

        other = start(chain, ta=TA2, body=b"other ta")
        assert_batches_refused(
            chain,
            TA,
            lambda starts: tx_pb2.MsgStartInferences(ta=addr(TA), starts=starts),
            [
                ([other], "start 0: its ta"),
                ([], "1 to 256"),
                ([start(chain, body=str(i).encode()) for i in range(257)], "1 to 256"),
            ],
        )
        assert balances(chain) == after


@pytest.mark.parametrize("field, value", [("name", "tiny-llama\n"), ("weights_sha256", SHA + "\n")])
def test_invalid_model_text_with_a_trailing_newline(field: str, value: str) -> None:
    """A pattern's ``$`` would take a trailing newline into state; every one ends in ``\\Z``."""
    bad = inference_pb2.Model(name="tiny-llama", weights_sha256=SHA, context_length=2048, price_per_token=PRICE)
    setattr(bad, field, value)
    bad.id = f"{bad.name}@sha256:{bad.weights_sha256}"
    with pytest.raises(ABCIError) as refusal:
        validate_model(bad)
    assert (refusal.value.codespace, refusal.value.code) == ("inference", 2)


@pytest.mark.parametrize(
    "source_url, error",
    [
        ("ftp://host/models/x", "source_url 'ftp://host/models/x' must be http:// or https:// with a host"),
        ("http:///models/x", "must be http:// or https:// with a host"),
        ("http://host/models x", "source_url must be at most 256 characters without spaces or controls"),
        ("http://host/" + "x" * 250, "source_url must be at most 256 characters"),
    ],
)
def test_model_source_url_is_an_http_url_or_empty(source_url: str, error: str) -> None:
    model = inference_pb2.Model(
        id=f"tiny-llama@sha256:{SHA}", name="tiny-llama", weights_sha256=SHA, context_length=2048, price_per_token=PRICE
    )
    validate_model(model)  # empty: distributed out of band
    model.source_url = f"https://host.example/models/{SHA}"
    validate_model(model)
    model.source_url = source_url
    with pytest.raises(ABCIError) as refusal:
        validate_model(model)
    assert (refusal.value.codespace, refusal.value.code) == ("inference", 2)
    assert error in refusal.value.detail


def test_invalid_node_id_with_a_trailing_newline() -> None:
    bad = inference_pb2.MlNode(
        operator=addr(HOST_A), node_id="node-a\n", url="http://127.0.0.1:1", models=[MODEL], max_concurrency=1
    )
    with pytest.raises(ABCIError) as refusal:
        validate_node(bad)
    assert (refusal.value.codespace, refusal.value.code) == ("inference", 4)


def test_a_batch_of_finishes_judges_each_on_its_own(tmp_path: Path) -> None:
    """``MsgFinishInferences``: the finishes that can go on pay their executor, with their events; one of an
    inference another host executes, one of an unknown id and a repeat of the first are left out with their
    codes, and the others are paid all the same. A finish of another executor, or an empty or oversized batch,
    refuses the whole message before it runs."""
    with make_chain(tmp_path / "db") as chain:
        supply = chain.supply()
        mine = [start(chain, body=b"one", max_tokens=100), start(chain, BOB, body=b"two", max_tokens=100)]
        theirs = start(chain, body=b"theirs", executor=HOST_B, max_tokens=100)
        ok(deliver(chain, TA, tx_pb2.MsgStartInferences(ta=addr(TA), starts=[*mine, theirs]))[0])
        before = balances(chain)
        unknown = hashlib.sha256(b"no such inference").digest()
        batch = tx_pb2.MsgFinishInferences(
            executor=addr(HOST_A),
            finishes=[
                finish(id_of(mine[0]), completion=30),
                finish(id_of(theirs), completion=30),
                finish(unknown),
                finish(id_of(mine[1]), completion=50),
                finish(id_of(mine[0]), completion=30),
            ],
        )
        result, response = deliver(chain, HOST_A, batch)
        ok(result)
        reply = reply_of(result, tx_pb2.MsgFinishInferencesResponse)
        codes = [(r.codespace, r.code == 0) for r in reply.results]
        assert codes == [("", True), ("inference", False), ("inference", False), ("", True), ("inference", False)]
        assert [r.id for r in reply.results] == [f.id for f in batch.finishes]
        assert [(r.payment, r.refund) for r in reply.results if r.code == 0] == [
            (30 * PRICE, 70 * PRICE),
            (50 * PRICE, 50 * PRICE),
        ]
        assert [e["id"] for e in events(response, "finish_inference")] == [id_of(mine[0]).hex(), id_of(mine[1]).hex()]
        assert [get(chain, id_of(m)).status for m in (*mine, theirs)] == [
            inference_pb2.STATUS_FINISHED,
            inference_pb2.STATUS_FINISHED,
            inference_pb2.STATUS_STARTED,
        ]
        after = balances(chain)
        assert (after["host_a"], after["alice"], after["bob"], after["escrow"]) == (
            before["host_a"] + 80 * PRICE,
            before["alice"] + 70 * PRICE,
            before["bob"] + 50 * PRICE,
            before["escrow"] - 200 * PRICE,
        )
        assert chain.supply() == supply

        other = finish(id_of(theirs), executor=HOST_B)
        assert_batches_refused(
            chain,
            HOST_A,
            lambda finishes: tx_pb2.MsgFinishInferences(executor=addr(HOST_A), finishes=finishes),
            [([other], "finish 0: its executor"), ([], "1 to 256"), ([finish(id_of(theirs))] * 257, "1 to 256")],
        )
        assert balances(chain) == after
