"""PoC V2's finish-to-verdict time on the 4-validator localnet (``localnet/settings.toml``: every validator a host
with its own ML node behind its host's program, two TAs), with x/poc's default windows and the validation rate
raised to 1 so every answer is re-executed.

Host 1 accuses every answer drawn for it (the test-only ``--poc-fault accuse``), so one run shows both paths:
an answer another host validates (finish → the drawn validator's verdict in a block) and an answer host 1
accuses (finish → the dispute decided by its voters' votes). Heights are the chain's (the validation record's
``finish_height``, ``verdict_height``, ``decided_height``), seconds the block headers' times between them; the
requests go out ``--concurrency`` at a time through the OpenAI client.

    .venv/bin/python bench/bench_poc_verdict.py [--requests 48] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from chain_reads import finished, fund  # noqa: E402
from nodes import restart_executors  # noqa: E402

from bench.common import log  # noqa: E402
from gonka import Gonka  # noqa: E402
from gonkad import genesis, localnet  # noqa: E402
from protogen.gonka.poc.v1 import poc_pb2  # noqa: E402
from sdk.cli.flags import message_dict  # noqa: E402
from sdk.client.querier import Querier  # noqa: E402
from sdk.client.rpc import CometRPC  # noqa: E402
from sdk.client.txbuilder import address_of  # noqa: E402
from sdk.crypto import secp256k1  # noqa: E402
from x.poc.client.queries import validation  # noqa: E402
from x.poc.params import default_params  # noqa: E402

REQUESTER = secp256k1.PrivateKey(hashlib.sha256(b"bench poc verdict: requester").digest())
ENDED = {poc_pb2.STATUS_VALIDATED, poc_pb2.STATUS_CLEARED, poc_pb2.STATUS_INVALIDATED, poc_pb2.STATUS_MISSED,
         poc_pb2.STATUS_UNDECIDED}  # fmt: skip


def settings() -> localnet.LocalnetSettings:
    base = localnet.load_settings(validators=4, chain_id="gonka-poc-bench", with_services=True)
    poc = {**message_dict(default_params()), "min_validation_rate": "1", "max_validation_rate": "1"}
    overrides = {"poc": {"params": poc}, "epochs": {"params": {"epoch_length": "100000"}}}
    return base.model_copy(update={"genesis": genesis.merge_overrides(base.genesis, overrides)})


def block_time(rpc: CometRPC, height: int) -> float:
    stamp = rpc.call("header", height=str(height))["header"]["time"]
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole + "+00:00").timestamp() + float("0." + (fraction or "0"))


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)]
    return f"{statistics.median(ordered):.1f} / {p90:.1f} / {ordered[-1]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-poc-") as tmp:
        root = Path(tmp) / "net"
        localnet.start(root, settings=settings())
        try:
            localnet.wait_for_height(root, 2, timeout_s=120)
            spec = localnet.load(root)
            assert spec.services is not None
            node = spec.nodes[0]
            q, rpc = Querier(node.rpc), CometRPC(node.rpc)
            fund(q, localnet.load_key(root, "faucet"), spec.chain_id, [address_of(REQUESTER)], 10**12)
            restart_executors(root, {1: ["--poc-fault", "accuse"]})
            accuser = address_of(localnet.load_key(root, "val1"))
            tas = [ta.url for ta in spec.services.of("agent")]

            def one(i: int) -> str:
                client = Gonka(ta_urls=[tas[i % 2]], key=REQUESTER)
                client.chat.completions.create(
                    model=spec.services.model,  # type: ignore[union-attr]
                    max_tokens=8,
                    messages=[{"role": "user", "content": f"bench {i}"}],
                )
                assert client.last_inference_id
                return client.last_inference_id

            started = time.monotonic()
            with ThreadPoolExecutor(args.concurrency) as pool:
                ids = list(pool.map(one, range(args.requests)))
            log(f"{len(ids)} answers in {time.monotonic() - started:.1f} s")
            records = []
            for the_id in ids:
                finished(q, the_id, 60)
                deadline = time.monotonic() + 180
                while (record := validation(q, bytes.fromhex(the_id))).status not in ENDED:
                    assert time.monotonic() < deadline, record
                    time.sleep(0.5)
                records.append(record)
            first, last = records[0].finish_height, max(r.decided_height or r.verdict_height for r in records)
            block_s = (block_time(rpc, last) - block_time(rpc, first)) / max(1, last - first)
            validated = [r for r in records if r.validator != accuser]
            disputed = [r for r in records if r.validator == accuser]
            print(f"4 validators, {len(records)} answers, {args.concurrency} at a time; mean block {block_s:.2f} s")
            print()
            print("| path | answers | statuses | blocks: median / p90 / max | seconds: median / p90 / max |")
            print("|---|---:|---|---:|---:|")
            for name, group, end in (
                ("finish → verdict (validated)", validated, lambda r: r.verdict_height),
                ("finish → decided (dispute by host 1)", disputed, lambda r: r.decided_height),
            ):
                if not group:
                    continue
                blocks = [float(end(r) - r.finish_height) for r in group]
                seconds = [block_time(rpc, end(r)) - block_time(rpc, r.finish_height) for r in group]
                statuses = ", ".join(sorted({poc_pb2.Status.Name(r.status) for r in group}))
                print(f"| {name} | {len(group)} | {statuses} | {quantiles(blocks)} | {quantiles(seconds)} |")
        finally:
            localnet.stop(root)


if __name__ == "__main__":
    main()
