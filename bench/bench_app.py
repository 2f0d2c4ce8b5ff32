"""App overhead of an empty block: PrepareProposal + ProcessProposal + FinalizeBlock + Commit.

Measured two ways: direct method calls on GonkaApp, and through the ABCI socket server with a client
that speaks the wire protocol as CometBFT does (one request, Flush, wait). Median of several runs.

    .venv/bin/python bench/bench_app.py [--blocks 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402

from app import GonkaApp  # noqa: E402
from gonkad import genesis  # noqa: E402
from sdk.abci.framing import FrameDecoder, encode_frame  # noqa: E402
from sdk.abci.server import ABCIServer  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402


def new_app(path: str) -> GonkaApp:
    app = GonkaApp(CommitStore(path))
    state = json.dumps(genesis.default_app_state()).encode()
    app.init_chain(abci.RequestInitChain(chain_id="bench", initial_height=1, app_state_bytes=state))
    return app


def block_requests(height: int) -> list[abci.Request]:
    return [
        abci.Request(prepare_proposal=abci.RequestPrepareProposal(max_tx_bytes=1 << 20, height=height)),
        abci.Request(process_proposal=abci.RequestProcessProposal(height=height)),
        abci.Request(finalize_block=abci.RequestFinalizeBlock(height=height)),
        abci.Request(commit=abci.RequestCommit()),
    ]


def run_direct(blocks: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        app = new_app(str(Path(tmp) / "db"))
        start = time.perf_counter()
        for height in range(1, blocks + 1):
            app.prepare_proposal(abci.RequestPrepareProposal(max_tx_bytes=1 << 20, height=height))
            app.process_proposal(abci.RequestProcessProposal(height=height))
            app.finalize_block(abci.RequestFinalizeBlock(height=height))
            app.commit(abci.RequestCommit())
        elapsed = time.perf_counter() - start
        app.store.close()
    return elapsed / blocks * 1000


async def closing(app: GonkaApp) -> None:
    app.store.close()


def _call(sock: socket.socket, decoder: FrameDecoder, request: abci.Request) -> None:
    sock.sendall(
        encode_frame(request.SerializeToString())
        + encode_frame(abci.Request(flush=abci.RequestFlush()).SerializeToString())
    )
    answers = 0
    while answers < 2:
        answers += sum(1 for _ in decoder.feed(sock.recv(1 << 16)))


def run_socket(blocks: int) -> float:
    """The server runs in a thread's event loop; this thread plays CometBFT's consensus connection. The app is
    built on the loop's thread too: the state tree's native handle stays on the thread that made it."""
    with tempfile.TemporaryDirectory() as tmp:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        async def serving() -> tuple[GonkaApp, ABCIServer]:
            app = new_app(str(Path(tmp) / "db"))
            server = ABCIServer(app, "127.0.0.1", 0)
            await server.start()
            return app, server

        app, server = asyncio.run_coroutine_threadsafe(serving(), loop).result()
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        decoder = FrameDecoder()
        start = time.perf_counter()
        for height in range(1, blocks + 1):
            for request in block_requests(height):
                _call(sock, decoder, request)
        elapsed = time.perf_counter() - start
        sock.close()
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result()
        asyncio.run_coroutine_threadsafe(closing(app), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
    return elapsed / blocks * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    direct = [run_direct(args.blocks) for _ in range(args.runs)]
    over_socket = [run_socket(args.blocks) for _ in range(args.runs)]
    print("| path | median ms per empty block | min | max |")
    print("|---|---|---|---|")
    for name, values in (("direct calls", direct), ("ABCI socket", over_socket)):
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")


if __name__ == "__main__":
    main()
