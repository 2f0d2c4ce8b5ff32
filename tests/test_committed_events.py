"""Following the committed blocks' events instead of reading the chain per request, over a scripted node (its
committed height and each height's ``block_results``): the ``HeightFollower`` (sdk/client/heights.py), the host's
``CommittedInferences`` and what the admission's ``confirm`` and the finisher then read of the chain (host/), and
the Transfer Agent's ``StartedIds`` (agent/started.py). On a real chain: tests/test_paid_answers_localnet.py and
tests/test_agent_localnet.py."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import pytest
from google.protobuf.message import Message

from agent.started import StartedIds
from host import Finisher, StartAdmission
from host.committed import ASK, CommittedInferences
from protogen.gonka.inference.v1 import inference_pb2, query_pb2
from sdk.client.chain import ChainClient
from sdk.client.heights import HeightFollower, events_of
from sdk.client.rpc import RPCError, RPCNotFound
from sdk.client.signer import Sent
from sdk.coins import Coins
from sdk.crypto import bech32, secp256k1
from x.inference.client import ChainError, Finish

HOST_KEY = secp256k1.PrivateKey(hashlib.sha256(b"events host").digest())
HOST = bech32.encode(secp256k1.address_bytes(HOST_KEY.public_key))
OTHER = bech32.encode(secp256k1.address_bytes(secp256k1.PrivateKey(hashlib.sha256(b"other").digest()).public_key))
STARTED, FINISHED = inference_pb2.STATUS_STARTED, inference_pb2.STATUS_FINISHED


def event(kind: str, **attributes: str) -> dict[str, Any]:
    """An event as CometBFT's ``block_results`` shows it."""
    return {"type": kind, "attributes": [{"key": k, "value": v, "index": True} for k, v in attributes.items()]}


def start(i: int, executor: str = HOST) -> dict[str, Any]:
    return event(
        "start_inference",
        id=bytes([i]).hex() * 32,
        requester="req",
        ta="ta",
        executor=executor,
        model="m1",
        escrow="80ngonka",
        max_tokens="8",
        seed=str(40 + i),
        params_hash="ab" * 32,
    )


def ident(i: int) -> bytes:
    return bytes([i]) * 32


class Node:
    """A node's committed height, each height's events (one transaction a list) and its inference records; counts
    the ``block_results`` and ``Query/Inference`` reads."""

    def __init__(self, height: int = 10) -> None:
        self.height = height
        self.blocks: dict[int, list[list[dict[str, Any]]]] = {}
        self.block_events: dict[int, list[dict[str, Any]]] = {}
        self.records: dict[bytes, inference_pb2.Inference] = {}
        self.unreadable: set[int] = set()
        self.block_reads: list[int] = []
        self.inference_reads = 0

    def commit(self, *txs: list[dict[str, Any]], block: tuple[dict[str, Any], ...] = ()) -> None:
        self.height += 1
        self.blocks[self.height] = list(txs)
        self.block_events[self.height] = list(block)

    def call(self, method: str, height: str) -> dict[str, Any]:
        if method == "header":  # block h made at 1000 + h seconds
            return {
                "header": {"time": datetime.fromtimestamp(1000 + int(height), UTC).strftime("%Y-%m-%dT%H:%M:%S.5Z")}
            }
        assert method == "block_results"
        self.block_reads.append(int(height))
        if int(height) in self.unreadable:
            raise RPCError("block_results: not yet")
        return {
            "txs_results": [{"code": 0, "events": events} for events in self.blocks.get(int(height), [])],
            "finalize_block_events": self.block_events.get(int(height), []),
        }

    def app_height(self) -> int:
        return self.height

    def query(self, path: str, request: Message, response_type: Any) -> Message:
        assert path.endswith("/Inference")
        self.inference_reads += 1
        record = self.records.get(bytes.fromhex(request.id))  # type: ignore[attr-defined]
        if record is None:
            raise RPCNotFound("not found")
        return query_pb2.QueryInferenceResponse(inference=record)


def test_events_of_a_block_leave_out_refused_transactions() -> None:
    results = {
        "txs_results": [
            {"code": 0, "events": [event("fee", amount="1"), event("start_inference", id="aa")]},
            {"code": 5, "events": [event("fee", amount="2")]},
        ],
        "finalize_block_events": [event("expire_inference", id="bb")],
    }
    assert events_of(results, frozenset({"start_inference", "expire_inference"})) == [
        ("start_inference", {"id": "aa"}),
        ("expire_inference", {"id": "bb"}),
    ]


def test_the_follower_reads_each_height_once_in_order_and_again_when_it_failed() -> None:
    node, applied, restarts = Node(), [], []
    follower = HeightFollower(
        node.call,
        node.app_height,
        frozenset(),
        lambda h, e: applied.append(h),
        restarts.append,
        0.0,
        max_behind=5,
    )
    assert follower.sync() == 10 and not follower.current(10)  # starts at the committed height, reads nothing
    node.commit()
    node.commit()
    assert follower.sync() == 12 and follower.current(12) and applied == [11, 12]
    assert follower.sync() == 12 and node.block_reads == [11, 12]  # no new height, no read
    node.commit()
    with follower.fetching:  # another caller reading: one that does not wait goes on with what was read
        assert follower.sync(wait=False) == 13 and applied == [11, 12] and not follower.current(13)
    node.commit()
    node.unreadable = {14}
    assert follower.sync() == 14 and applied == [11, 12, 13]
    assert follower.current(13) and not follower.current(14)  # the caller of height 14 asks the chain
    node.unreadable = set()
    follower.sync()
    assert applied == [11, 12, 13, 14] and follower.current(14)
    node.height += 9  # fell behind more than max_behind: starts again at the committed height
    assert follower.sync() == 23 and restarts == [10, 23] and applied[-1] == 14 and not follower.current(23)
    node.commit()
    follower.sync()
    assert applied[-1] == 24 and follower.current(24)
    follower.lookback = follower.max_behind = 3
    node.height += 10  # starts again 3 heights back, and reads those
    assert follower.sync() == 34 and restarts[-1] == 31 and applied[-3:] == [32, 33, 34] and follower.current(34)


def committed(node: Node) -> CommittedInferences:
    client = ChainClient("tcp://127.0.0.1:1", HOST_KEY, None, "gonka-x", 100_000, Coins(), 5.0, 0.0, lambda: 0.0)
    client.querier.query = node.query  # type: ignore[method-assign]
    return CommittedInferences(node, client.querier, HOST, poll_s=0.0, keep_heights=20)


def test_the_index_keeps_this_hosts_inferences_as_the_blocks_move_them() -> None:
    node = Node()
    index = committed(node)
    height = index.sync()
    assert index.seen(ident(1), height) is ASK  # nothing read yet: a start from before is the chain's to tell
    node.commit([start(1), start(2, executor=OTHER)], [start(3)])
    height = index.sync()
    record = index.seen(ident(1), height)
    assert isinstance(record, inference_pb2.Inference)
    assert (record.status, record.executor, record.model, record.max_tokens, record.seed, record.params_hash) == (
        STARTED,
        HOST,
        "m1",
        8,
        41,
        b"\xab" * 32,
    )
    assert index.seen(ident(2), height) is None  # another host's
    node.commit(
        [event("finish_inference", id=ident(1).hex(), executor=HOST)],
        [event("reassign_inference", id=ident(2).hex(), previous=OTHER, executor=HOST)],
        block=(event("expire_inference", id=ident(3).hex()),),
    )
    height = index.sync()
    finished = index.seen(ident(1), height)
    assert isinstance(finished, inference_pb2.Inference) and (finished.status, finished.finish_height) == (
        FINISHED,
        12,
    )
    assert record.status == STARTED  # a record handed out is never changed under its holder
    assert index.seen(ident(2), height) is ASK  # reassigned to this host: the chain's to tell
    expired = index.seen(ident(3), height)
    assert isinstance(expired, inference_pb2.Inference) and expired.status == inference_pb2.STATUS_EXPIRED
    assert node.inference_reads == 0
    # a read that saw more than the blocks applied is not undone by the events between
    node.records[ident(4)] = inference_pb2.Inference(id=ident(4), status=FINISHED, executor=HOST)
    assert index.read(ident(4)) is not None
    node.commit([start(4)])
    height = index.sync()
    assert index.seen(ident(4), height).status == FINISHED  # type: ignore[union-attr]
    for _ in range(20):  # no news of them for keep_heights: forgotten, asked of the chain if ever needed again
        node.commit()
    height = index.sync()
    assert index.seen(ident(1), height) is None and index.records == {}


def admission(node: Node) -> StartAdmission:
    client = ChainClient("tcp://127.0.0.1:1", HOST_KEY, None, "gonka-x", 100_000, Coins(), 5.0, 0.0, lambda: 0.0)
    client.querier.query = node.query  # type: ignore[method-assign]
    client.rpc.call = node.call  # type: ignore[method-assign]
    client.rpc.app_height = node.app_height  # type: ignore[method-assign]
    return StartAdmission(client, confirm_blocks=3, confirm_poll_s=0.0)


def test_confirm_answers_from_the_blocks_and_reads_the_chain_only_to_refuse() -> None:
    """``confirm`` waits on the blocks' events: a start naming this host in a block read is confirmed with no
    ``Query/Inference``; one that names another host, or none in ``confirm_blocks`` heights, is read once from the
    chain before it is refused (a start from before the heights followed); a reassignment to this host is asked
    of the chain."""
    node = Node()
    gate = admission(node)
    gate.committed.sync()
    node.commit()
    gate.committed.sync()  # the follower is current from here on
    node.commit([start(1)])
    record = gate.confirm(ident(1))
    assert (record.executor, record.max_tokens, record.seed) == (HOST, 8, 41) and node.inference_reads == 0
    heights = iter(range(node.height + 1, 1000))

    def next_height() -> int:  # a new (empty) height at every poll
        node.height = next(heights)
        return node.height

    gate.committed.follower.app_height.load = next_height
    node.commit([start(2, executor=OTHER)])
    with pytest.raises(ChainError, match="no record"):
        gate.confirm(ident(2))
    assert node.inference_reads == 1
    node.records[ident(5)] = inference_pb2.Inference(id=ident(5), status=STARTED, executor=HOST)
    assert gate.confirm(ident(5)) == node.records[ident(5)]  # committed before the heights followed
    assert node.inference_reads == 2
    gate.committed.follower.app_height.load = node.app_height
    node.commit([event("reassign_inference", id=ident(2).hex(), previous=OTHER, executor=HOST)])
    node.records[ident(2)] = inference_pb2.Inference(id=ident(2), status=STARTED, executor=HOST)
    assert gate.confirm(ident(2)).executor == HOST and node.inference_reads == 3


def test_the_finisher_sees_its_finishes_through_the_blocks_without_reading_them() -> None:
    node, sent = Node(), []
    finisher = Finisher("tcp://127.0.0.1:9", HOST_KEY, confirm_blocks=2, max_batch=4)
    finisher.querier.query = node.query  # type: ignore[method-assign]
    finisher.rpc.call = node.call  # type: ignore[method-assign]
    finisher.rpc.app_height = node.app_height  # type: ignore[method-assign]
    finisher.committed = CommittedInferences(finisher.rpc, finisher.querier, HOST, poll_s=0.0)
    finisher.rpc.status = lambda: {"sync_info": {"latest_block_height": str(node.height)}}  # type: ignore
    finisher.signer.submit = lambda messages, gas=None: sent.append(messages) or Sent("TX", b"")  # type: ignore
    finisher.committed.sync()
    node.commit([start(1), start(2)])
    for i in (1, 2):
        finisher.submit(Finish(ident(i), b"\x01" * 32, 5, 30, b"\x02" * 32))
    finisher.step()
    assert len(sent) == 1 and [m.completion_tokens for m in sent[0][0].finishes] == [8, 8]  # capped by the event
    node.commit([event("finish_inference", id=ident(1).hex(), executor=HOST)])
    node.commit([event("finish_inference", id=ident(2).hex(), executor=HOST)])
    finisher.step()
    assert finisher.finished == 2 and not finisher.pending and node.inference_reads == 0
    finisher.submit(Finish(ident(7), b"\x01" * 32, 5, 3, b"\x02" * 32))  # started before the heights followed
    node.records[ident(7)] = inference_pb2.Inference(id=ident(7), status=FINISHED, executor=HOST)
    finisher.step()
    assert finisher.finished == 3 and node.inference_reads == 1


def test_the_tas_started_ids_answer_fresh_requests_from_the_blocks() -> None:
    """With the chain's ``request_max_future_s`` 30 s and blocks made at 1000 + height seconds (tests' ``Node``)."""
    node, wall = Node(height=300), [2000.0]
    started = StartedIds(
        node.call, node.app_height, lambda: 30, poll_s=0.0, keep_s=100, skew_s=5, lookback=200, wall=lambda: wall[0]
    )
    node.blocks[150] = [[start(1, executor=OTHER)]]
    node.blocks[90] = [[start(2, executor=OTHER)]]  # below the lookback
    fresh = int(1131e9)  # after the floor (block 100's time, 1100.5 s) + 30 s
    assert started.known(ident(1), fresh) is True  # read back at the first request
    assert started.floor == 1100.5 and started.known(ident(3), fresh) is False
    assert started.known(ident(2), int(1130e9)) is None  # could be in a block not read: the chain's to tell
    node.commit()
    with started.follower.fetching:  # another request reading the new block: not waited for
        assert started.known(ident(3), fresh) is False
    node.commit()
    node.unreadable = {node.height - 1, node.height}
    assert started.known(ident(3), fresh) is None  # more than that block behind: the chain's to tell
    node.unreadable = set()
    wall[0] = 2200.0
    node.commit()
    assert started.known(ident(1), int(900e9)) is None  # forgotten after keep_s (read at 2000 s)
    assert started.floor == 2005.0 and started.known(ident(3), int(2036e9)) is False  # read by 2000 s, skew 5 s
    node.height += 300  # fell behind: starts again 200 heights back, floor from that block's header
    node.unreadable = {node.height - 199}  # the first of them unreadable now: read again at the next request
    assert started.known(ident(3), int(2036e9)) is None
    node.unreadable = set()
    assert started.known(ident(3), int(2036e9)) is False and started.follower.since == node.height - 200
