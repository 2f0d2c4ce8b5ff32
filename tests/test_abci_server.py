"""ABCI socket server: framing, dispatch, ordering, isolation of failures, consensus before the mempool.

Every server test runs a real ``ABCIServer`` on 127.0.0.1 (port 0) and talks
to it over real TCP sockets, inside ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from hypothesis import given, settings
from hypothesis import strategies as st

from gonkad.config import AppConfig, save_app_config
from gonkad.localnet import free_ports
from gonkad.paths import app_db
from sdk.abci import (
    ABCIServer,
    Application,
    FrameDecoder,
    FrameError,
    encode_frame,
)
from sdk.abci.framing import encode_uvarint
from sdk.abci.server import SLICE

TIMEOUT = 5.0


# --------------------------------------------------------------------------
# helpers


def frame(req: abci.Request) -> bytes:
    return encode_frame(req.SerializeToString())


def echo(msg: str) -> abci.Request:
    return abci.Request(echo=abci.RequestEcho(message=msg))


FLUSH = abci.Request(flush=abci.RequestFlush())


class Client:
    """Minimal ABCI socket client: raw frames out, decoded Responses in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder()
        self.pending: list[abci.Response] = []

    @classmethod
    async def connect(cls, port: int) -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    @classmethod
    async def connect_when_up(cls, port: int, tries: int) -> Client:
        """``connect`` once a node started in another process listens (every 0.1 s, ``tries`` times at most)."""
        for _ in range(tries - 1):
            try:
                return await cls.connect(port)
            except OSError:
                await asyncio.sleep(0.1)
        return await cls.connect(port)

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send(self, *reqs: abci.Request) -> None:
        await self.send_raw(b"".join(frame(r) for r in reqs))

    async def recv(self, n: int) -> list[abci.Response]:
        """Read exactly ``n`` responses (fails on EOF or timeout)."""
        async with asyncio.timeout(TIMEOUT):
            while len(self.pending) < n:
                chunk = await self.reader.read(1 << 16)
                assert chunk, f"EOF after {len(self.pending)} of {n} responses"
                for f in self.decoder.feed(chunk):
                    self.pending.append(abci.Response.FromString(f))
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    async def call(self, *reqs: abci.Request) -> list[abci.Response]:
        await self.send(*reqs)
        return await self.recv(len(reqs))

    async def read_until_eof(self) -> list[abci.Response]:
        """All responses the server sends before closing the connection."""
        async with asyncio.timeout(TIMEOUT):
            while chunk := await self.reader.read(1 << 16):
                for f in self.decoder.feed(chunk):
                    self.pending.append(abci.Response.FromString(f))
        out, self.pending = self.pending, []
        return out

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


def abci_only_home(tmp_path: Path) -> tuple[Path, int]:
    """A node home for ``gonkad start --abci-only`` on free loopback ports (a test drives it as CometBFT would,
    with ``Client``), its application DB's folder made; the home and its ABCI port."""
    home = tmp_path / "node"
    (home / "config").mkdir(parents=True)
    (home / "config" / "genesis.json").write_text("{}")  # gonkad start wants one; --abci-only reads none
    abci_port, grpc_port = free_ports(2)
    save_app_config(home, AppConfig(abci_address=f"tcp://127.0.0.1:{abci_port}", grpc_address=f"127.0.0.1:{grpc_port}"))
    app_db(home).parent.mkdir(parents=True)
    return home, abci_port


def serve(
    test: Callable[[ABCIServer], Awaitable[None]],
    app: Application | None = None,
    **kwargs: int,
) -> None:
    """Run ``test(server)`` against a started server, then stop it."""

    async def main() -> None:
        server = ABCIServer(app or Application(), "127.0.0.1", 0, **kwargs)
        await server.start()
        try:
            await test(server)
        finally:
            await server.stop()

    asyncio.run(main())


def kinds(responses: list[abci.Response]) -> list[str | None]:
    return [r.WhichOneof("value") for r in responses]


def sample_requests() -> list[abci.Request]:
    """One request of every type, with contents exercising the defaults."""
    return [
        echo("hello"),
        FLUSH,
        abci.Request(info=abci.RequestInfo(version="0.38.0", block_version=11)),
        abci.Request(init_chain=abci.RequestInitChain(chain_id="gonka-test")),
        abci.Request(query=abci.RequestQuery(path="/store/bank", data=b"k")),
        abci.Request(check_tx=abci.RequestCheckTx(tx=b"tx-1")),
        abci.Request(prepare_proposal=abci.RequestPrepareProposal(max_tx_bytes=10, txs=[b"aaa", b"bbb", b"cc", b"d"])),
        abci.Request(process_proposal=abci.RequestProcessProposal(txs=[b"aaa"], height=2)),
        abci.Request(extend_vote=abci.RequestExtendVote(height=2)),
        abci.Request(verify_vote_extension=abci.RequestVerifyVoteExtension(height=2)),
        abci.Request(finalize_block=abci.RequestFinalizeBlock(txs=[b"a", b"b", b"c"], height=2)),
        abci.Request(commit=abci.RequestCommit()),
        abci.Request(list_snapshots=abci.RequestListSnapshots()),
        abci.Request(offer_snapshot=abci.RequestOfferSnapshot(app_hash=b"h")),
        abci.Request(load_snapshot_chunk=abci.RequestLoadSnapshotChunk(height=1, format=1)),
        abci.Request(apply_snapshot_chunk=abci.RequestApplySnapshotChunk(index=0)),
    ]


REQUEST_KINDS = [f.name for f in abci.Request.DESCRIPTOR.oneofs_by_name["value"].fields]


# --------------------------------------------------------------------------
# framing


def test_encode_frame_matches_go_uvarint() -> None:
    assert encode_frame(b"") == b"\x00"
    assert encode_frame(b"x" * 127)[:1] == b"\x7f"
    assert encode_frame(b"x" * 128)[:2] == b"\x80\x01"
    assert encode_frame(b"x" * 300)[:2] == b"\xac\x02"
    assert encode_uvarint(2**64 - 1) == b"\xff" * 9 + b"\x01"


def test_decoder_every_split_point() -> None:
    payloads = [b"", b"a", b"x" * 200, bytes(range(256)), b"tail"]
    stream = b"".join(encode_frame(p) for p in payloads)
    for k in range(len(stream) + 1):
        dec = FrameDecoder()
        got = list(dec.feed(stream[:k])) + list(dec.feed(stream[k:]))
        assert got == payloads, k
        assert dec.buffered == 0


def test_decoder_byte_at_a_time_is_linear() -> None:
    """A 2 MB frame fed one byte per call: linear takes ~2 s, quadratic hours."""
    payload = bytes(2_000_000)
    data = encode_frame(payload)
    dec = FrameDecoder()
    start = time.perf_counter()
    frames = [f for i in range(len(data)) for f in dec.feed(data[i : i + 1])]
    elapsed = time.perf_counter() - start
    assert frames == [payload]
    assert elapsed < 12, elapsed


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xff" * 11, "longer than 10 bytes"),
        (b"\xff" * 9 + b"\x02", "overflows"),
        (encode_uvarint(1025), "exceeds maximum"),
        (encode_uvarint(2**63), "exceeds maximum"),
    ],
)
def test_decoder_rejects_bad_length(data: bytes, message: str) -> None:
    dec = FrameDecoder(max_frame=1024)
    with pytest.raises(FrameError, match=message):
        list(dec.feed(data))
    with pytest.raises(FrameError):  # stays broken: the stream lost sync
        list(dec.feed(encode_frame(b"ok")))


def test_decoder_yields_good_frames_before_error() -> None:
    dec = FrameDecoder(max_frame=10)
    it = dec.feed(encode_frame(b"one") + encode_frame(b"two") + encode_uvarint(11))
    assert next(it) == b"one"
    assert next(it) == b"two"
    with pytest.raises(FrameError):
        next(it)


def test_decoder_accepts_max_frame_exactly() -> None:
    dec = FrameDecoder(max_frame=5)
    assert list(dec.feed(encode_frame(b"12345"))) == [b"12345"]


@settings(max_examples=300, deadline=1000)
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000)))
def test_decoder_arbitrary_bytes_only_frame_error(data: bytes, cuts: list[int]) -> None:
    dec = FrameDecoder(max_frame=4096)
    bounds = [0, *sorted(c for c in cuts if c <= len(data)), len(data)]
    total = 0
    try:
        for a, b in zip(bounds, bounds[1:]):
            for f in dec.feed(data[a:b]):
                total += len(f)
    except FrameError:
        return
    assert total + dec.buffered <= len(data)


@settings(max_examples=200, deadline=1000)
@given(
    payloads=st.lists(st.binary(max_size=300), max_size=10),
    cuts=st.lists(st.integers(0, 4000)),
)
def test_decoder_roundtrip_any_chunking(payloads: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(encode_frame(p) for p in payloads)
    bounds = [0, *sorted(c for c in cuts if c <= len(stream)), len(stream)]
    dec = FrameDecoder()
    got = [f for a, b in zip(bounds, bounds[1:]) for f in dec.feed(stream[a:b])]
    assert got == payloads
    assert dec.buffered == 0


# --------------------------------------------------------------------------
# default application


def test_application_defaults() -> None:
    app = Application()
    rpp = app.prepare_proposal(abci.RequestPrepareProposal(max_tx_bytes=10, txs=[b"aaa", b"bbb", b"cc", b"d"]))
    assert list(rpp.txs) == [b"aaa", b"bbb"]  # 5 bytes each as protobuf; stops at the first that overflows
    rfb = app.finalize_block(abci.RequestFinalizeBlock(txs=[b"a", b"b"]))
    assert [r.code for r in rfb.tx_results] == [0, 0]
    assert app.process_proposal(abci.RequestProcessProposal()).status == abci.ResponseProcessProposal.ACCEPT
    assert (
        app.verify_vote_extension(abci.RequestVerifyVoteExtension()).status == abci.ResponseVerifyVoteExtension.ACCEPT
    )
    assert app.offer_snapshot(abci.RequestOfferSnapshot()).result == abci.ResponseOfferSnapshot.REJECT
    assert app.apply_snapshot_chunk(abci.RequestApplySnapshotChunk()).result == abci.ResponseApplySnapshotChunk.ABORT
    for name in REQUEST_KINDS:
        assert callable(getattr(app, name))


# --------------------------------------------------------------------------
# server round trips


def test_every_request_type_round_trip() -> None:
    reqs = sample_requests()
    assert sorted(r.WhichOneof("value") for r in reqs) == sorted(REQUEST_KINDS)

    async def body(server: ABCIServer) -> None:
        assert server.port != 0
        client = await Client.connect(server.port)
        resps = await client.call(*reqs, FLUSH)
        assert kinds(resps) == kinds(reqs) + ["flush"]
        by_kind = {r.WhichOneof("value"): r for r in resps}
        assert by_kind["echo"].echo.message == "hello"
        assert list(by_kind["prepare_proposal"].prepare_proposal.txs) == [
            b"aaa",
            b"bbb",
        ]
        assert by_kind["process_proposal"].process_proposal.status == abci.ResponseProcessProposal.ACCEPT
        assert len(by_kind["finalize_block"].finalize_block.tx_results) == 3
        assert by_kind["offer_snapshot"].offer_snapshot.result == abci.ResponseOfferSnapshot.REJECT
        await client.close()

    serve(body)


def test_request_stream_byte_by_byte() -> None:
    reqs = [*sample_requests(), echo("x" * 300), FLUSH]

    async def body(server: ABCIServer) -> None:
        client = await Client.connect(server.port)
        for b in b"".join(frame(r) for r in reqs):
            await client.send_raw(bytes([b]))
        assert kinds(await client.recv(len(reqs))) == kinds(reqs)
        await client.close()

    serve(body)


def test_request_stream_every_split_point() -> None:
    """For each k, send stream[:k], let the server act on it, then stream[k:]."""
    reqs = [
        echo("a"),
        abci.Request(check_tx=abci.RequestCheckTx(tx=b"t" * 40)),
        echo("b" * 130),
        FLUSH,
    ]
    frames = [frame(r) for r in reqs]
    stream = b"".join(frames)
    ends = [sum(len(f) for f in frames[: i + 1]) for i in range(len(frames))]

    async def body(server: ABCIServer) -> None:
        client = await Client.connect(server.port)
        for k in range(len(stream) + 1):
            await client.send_raw(stream[:k])
            # Wait for the answers to the frames complete in the first part:
            # proves the server consumed that part before the rest arrives.
            done = sum(1 for e in ends if e <= k)
            first = await client.recv(done)
            if done == 0:
                await asyncio.sleep(0.001)
            await client.send_raw(stream[k:])
            rest = await client.recv(len(reqs) - done)
            resps = first + rest
            assert kinds(resps) == kinds(reqs), k
            assert resps[0].echo.message == "a"
            assert resps[2].echo.message == "b" * 130
        await client.close()

    serve(body)


def test_pipelined_requests_answered_in_order() -> None:
    n = 1000

    async def body(server: ABCIServer) -> None:
        client = await Client.connect(server.port)
        await client.send(*(echo(str(i)) for i in range(n)), FLUSH)
        resps = await client.recv(n + 1)
        assert [r.echo.message for r in resps[:n]] == [str(i) for i in range(n)]
        assert resps[n].WhichOneof("value") == "flush"
        await client.close()

    serve(body)


def test_large_frame_round_trip() -> None:
    big = "z" * 5_000_000

    async def body(server: ABCIServer) -> None:
        client = await Client.connect(server.port)
        resps = await client.call(echo(big), FLUSH)
        assert resps[0].echo.message == big
        await client.close()

    serve(body)


# --------------------------------------------------------------------------
# failures stay on their connection


GARBAGE = {
    "varint_too_long": b"\xff" * 11,
    "oversize_length": encode_uvarint((1 << 20) + 1),
    "huge_length": encode_uvarint(2**63),
    "not_protobuf": encode_frame(b"\xff\xff\xff"),
    "empty_request": encode_frame(b""),
    "unknown_field_only": encode_frame(b"\x98\x06\x01"),  # field 99, no value set
    "random_bytes": encode_frame(random.Random(7).randbytes(64)),
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_closes_only_that_connection(name: str, caplog: pytest.LogCaptureFixture) -> None:
    async def body(server: ABCIServer) -> None:
        before = await Client.connect(server.port)
        assert kinds(await before.call(echo("before"))) == ["echo"]

        bad = await Client.connect(server.port)
        # A valid request ahead of the garbage is still answered.
        await bad.send_raw(frame(echo("ok")) + GARBAGE[name])
        got = await bad.read_until_eof()
        assert [r.echo.message for r in got] == ["ok"]

        after = await Client.connect(server.port)
        assert (await after.call(echo("after")))[0].echo.message == "after"
        assert (await before.call(echo("still")))[0].echo.message == "still"
        for c in (before, bad, after):
            await c.close()

    with caplog.at_level(logging.ERROR, logger="sdk.abci"):
        serve(body, max_frame=1 << 20)
    assert any("malformed frame" in r.getMessage() for r in caplog.records)


class FailingApp(Application):
    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        if req.tx == b"boom":
            raise ValueError("state machine bug")
        return super().check_tx(req)

    def query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        return None  # type: ignore[return-value]  # wrong return type


@pytest.mark.parametrize(
    "request_, error",
    [
        (
            abci.Request(check_tx=abci.RequestCheckTx(tx=b"boom")),
            "ValueError: state machine bug",
        ),
        (
            abci.Request(query=abci.RequestQuery()),
            "TypeError: query returned NoneType",
        ),
    ],
)
def test_app_exception_yields_exception_response(
    request_: abci.Request, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def body(server: ABCIServer) -> None:
        other = await Client.connect(server.port)
        failing = await Client.connect(server.port)
        # Requests after the failing one are not executed: the connection closes.
        await failing.send(echo("first"), request_, echo("never"), FLUSH)
        got = await failing.read_until_eof()
        assert kinds(got) == ["echo", "exception"]
        assert got[1].exception.error.startswith(error)

        ok = abci.Request(check_tx=abci.RequestCheckTx(tx=b"fine"))
        assert kinds(await other.call(ok, FLUSH)) == ["check_tx", "flush"]
        fresh = await Client.connect(server.port)
        assert kinds(await fresh.call(ok, FLUSH)) == ["check_tx", "flush"]
        for c in (other, failing, fresh):
            await c.close()

    with caplog.at_level(logging.ERROR, logger="sdk.abci"):
        serve(body, app=FailingApp())
    assert any(r.exc_info for r in caplog.records if r.name == "sdk.abci")


# --------------------------------------------------------------------------
# concurrency


class ReentrancyCheckingApp(Application):
    """Records calls; fails if two calls ever overlap."""

    def __init__(self) -> None:
        self.active = 0
        self.max_active = 0
        self.calls = 0
        self.check_txs: list[bytes] = []

    def _enter(self) -> None:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        self.calls += 1
        time.sleep(0.0002)  # widen the window an overlap would need

    def _exit(self) -> None:
        self.active -= 1

    def echo(self, req: abci.RequestEcho) -> abci.ResponseEcho:
        self._enter()
        try:
            return super().echo(req)
        finally:
            self._exit()

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        self._enter()
        try:
            self.check_txs.append(req.tx)
            return abci.ResponseCheckTx(data=req.tx)
        finally:
            self._exit()

    def query(self, req: abci.RequestQuery) -> abci.ResponseQuery:
        self._enter()
        try:
            return abci.ResponseQuery(value=req.data)
        finally:
            self._exit()


def test_four_connections_interleaved() -> None:
    app = ReentrancyCheckingApp()
    per_conn = 150

    def requests_for(c: int) -> list[abci.Request]:
        reqs = []
        for i in range(per_conn):
            tag = f"{c}:{i}".encode()
            reqs.append(
                [
                    echo(tag.decode()),
                    abci.Request(check_tx=abci.RequestCheckTx(tx=tag)),
                    abci.Request(query=abci.RequestQuery(data=tag)),
                ][i % 3]
            )
        return reqs

    def payload(resp: abci.Response) -> bytes:
        kind = resp.WhichOneof("value")
        if kind == "echo":
            return resp.echo.message.encode()
        if kind == "check_tx":
            return resp.check_tx.data
        return resp.query.value

    async def drive(port: int, c: int) -> None:
        rng = random.Random(c)
        client = await Client.connect(port)
        reqs = requests_for(c)
        stream = b"".join(frame(r) for r in reqs) + frame(FLUSH)
        pos = 0
        while pos < len(stream):
            step = rng.randint(1, 200)
            await client.send_raw(stream[pos : pos + step])
            pos += step
            await asyncio.sleep(0)
        resps = await client.recv(len(reqs) + 1)
        assert [payload(r) for r in resps[:-1]] == [f"{c}:{i}".encode() for i in range(per_conn)]
        assert resps[-1].WhichOneof("value") == "flush"
        await client.close()

    async def body(server: ABCIServer) -> None:
        await asyncio.gather(*(drive(server.port, c) for c in range(4)))

    serve(body, app=app)
    assert app.calls == 4 * per_conn
    assert app.max_active == 1
    for c in range(4):  # the app saw each connection's txs in order
        mine = [t for t in app.check_txs if t.startswith(f"{c}:".encode())]
        assert mine == [f"{c}:{i}".encode() for i in range(1, per_conn, 3)]


def test_stop_closes_connections_and_listener() -> None:
    async def main() -> None:
        server = ABCIServer(Application(), "127.0.0.1", 0)
        serving = asyncio.create_task(server.serve_forever())
        await asyncio.sleep(0)
        while server.port == 0:
            await asyncio.sleep(0.001)
        client = await Client.connect(server.port)
        assert kinds(await client.call(echo("x"))) == ["echo"]
        await server.stop()
        await asyncio.wait_for(serving, TIMEOUT)
        assert await client.read_until_eof() == []
        with pytest.raises(OSError):
            await Client.connect(server.port)
        await client.close()

    asyncio.run(main())


# --------------------------------------------------------------------------
# consensus before the mempool


class SlowCheckApp(Application):
    """CheckTx costs a millisecond; each consensus call records how many CheckTx were answered before it."""

    def __init__(self) -> None:
        self.checked = 0
        self.seen_by: dict[str, int] = {}

    def check_tx(self, req: abci.RequestCheckTx) -> abci.ResponseCheckTx:
        time.sleep(0.001)
        self.checked += 1
        return abci.ResponseCheckTx(data=req.tx)

    def process_proposal(self, req: abci.RequestProcessProposal) -> abci.ResponseProcessProposal:
        self.seen_by["process_proposal"] = self.checked
        return super().process_proposal(req)

    def finalize_block(self, req: abci.RequestFinalizeBlock) -> abci.ResponseFinalizeBlock:
        self.seen_by["finalize_block"] = self.checked
        return super().finalize_block(req)


def check_batch(n: int) -> list[abci.Request]:
    return [abci.Request(check_tx=abci.RequestCheckTx(tx=str(i).encode())) for i in range(n)]


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not condition():
            await asyncio.sleep(0.001)


def test_consensus_answered_before_a_checktx_batch_finishes() -> None:
    """A FinalizeBlock sent while 2,000 CheckTx (one chunk, 2 s of work) are being answered waits a slice or two,
    not for the batch; the batch is still answered whole and in order, its Flush last."""
    app = SlowCheckApp()
    n = 2000

    async def body(server: ABCIServer) -> None:
        consensus = await Client.connect(server.port)
        mempool = await Client.connect(server.port)
        await mempool.send(*check_batch(n), FLUSH)
        await until(lambda: app.checked > 0)
        sent_at = app.checked
        finalize = abci.Request(finalize_block=abci.RequestFinalizeBlock(height=2))
        assert kinds(await consensus.call(finalize, FLUSH)) == ["finalize_block", "flush"]
        assert app.seen_by["finalize_block"] <= sent_at + 3 * SLICE < n
        resps = await mempool.recv(n + 1)
        assert [r.check_tx.data for r in resps[:n]] == [str(i).encode() for i in range(n)]
        assert kinds(resps[n:]) == ["flush"]
        for c in (consensus, mempool):
            await c.close()

    serve(body, app=app)


def test_mempool_waits_while_a_consensus_request_is_partly_received() -> None:
    """Half of a ProcessProposal frame on the consensus connection holds the CheckTx batch back until the rest
    arrives; then the proposal is answered first."""
    app = SlowCheckApp()
    n = 500

    async def body(server: ABCIServer) -> None:
        consensus = await Client.connect(server.port)
        assert kinds(await consensus.call(abci.Request(commit=abci.RequestCommit()))) == ["commit"]
        mempool = await Client.connect(server.port)
        await mempool.send(*check_batch(n), FLUSH)
        await until(lambda: app.checked > 0)
        proposal = frame(abci.Request(process_proposal=abci.RequestProcessProposal(txs=[b"x" * 1000], height=2)))
        await consensus.send_raw(proposal[:500])
        await asyncio.sleep(0.2)  # the slice being answered ends
        held = app.checked
        await asyncio.sleep(0.2)
        assert app.checked == held < n
        await consensus.send_raw(proposal[500:] + frame(FLUSH))
        assert kinds(await consensus.recv(2)) == ["process_proposal", "flush"]
        assert app.seen_by["process_proposal"] <= held + SLICE
        assert len(await mempool.recv(n + 1)) == n + 1
        for c in (consensus, mempool):
            await c.close()

    serve(body, app=app)
