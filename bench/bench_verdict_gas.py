"""The gas of PoC V2's ``MsgValidateInference`` transactions on the in-process chain (tests/chain.py), what a
validator host's ``VALIDATE_GAS`` (host/poc/config.py) must cover per message.

- **verdicts**: a drawn validator's MATCH and MISMATCH verdicts, 1, 4 and 16 in one transaction (two hosts: every
  inference of HOST_A is drawn for HOST_B; a mismatch opens a dispute);
- **votes**: on four and five hosts (a dispute's 2 voters, and x/poc's default of 3), a dispute's votes, least
  powerful voter first, up to the one that decides it: INVALIDATED (the payment taken back through x/vesting, the
  executor slashed and the slash paid out to the accuser and the voters) or CLEARED (the accuser slashed, paid to
  the executor and the voters), one message a transaction.

Each transaction is signed by one key (secp256k1, one signature), so per message = gas_used / messages: the
transaction's fixed cost (ante: signature, bytes) weighs most with one message.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_verdict_gas.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from chain import InProcessChain  # noqa: E402
from test_inference import AUTH, HOST_B, MODEL, PARAMS, SHA, addr, deliver, model, node, ok, raw  # noqa: E402
from test_poc_chain import ALWAYS, finished, make_chain, poc_params, validation  # noqa: E402
from test_stake import GNK, KEYS, host_chain  # noqa: E402

from protogen.gonka.poc.v1 import poc_pb2  # noqa: E402
from x.poc.client.queries import validate_message  # noqa: E402

SIZES = (1, 4, 16)
MATCH, MISMATCH = poc_pb2.VERDICT_MATCH, poc_pb2.VERDICT_MISMATCH


def verdicts(home: Path) -> list[dict[str, Any]]:
    """MATCH and MISMATCH verdicts by HOST_B, ``SIZES`` messages a transaction."""
    rows = []
    with make_chain(home, **{**ALWAYS, "validation_window_blocks": "1000"}) as chain:
        drawn = [finished(chain, f'{{"n":{n}}}'.encode())[0] for n in range(2 * sum(SIZES))]
        chain.block()
        chain.block()
        assert all(validation(chain, i).status == poc_pb2.STATUS_SELECTED for i in drawn)
        for verdict, score in ((MATCH, 999_000), (MISMATCH, 3_000)):
            for size in SIZES:
                ids, drawn = drawn[:size], drawn[size:]
                messages = [validate_message(addr(HOST_B), i, verdict, score) for i in ids]
                result, _ = deliver(chain, HOST_B, *messages)
                ok(result)
                rows.append(row(f"verdict {poc_pb2.Verdict.Name(verdict)}", size, result.gas_used))
    return rows


def hosts_chain(home: Path, count: int) -> InProcessChain:
    """``count`` hosts (tests' ``KEYS[:count]``, collateral 100, 150, … GNK) serving MODEL, every inference
    selected, a dispute drawing every host but its executor and accuser as voters."""
    keys = KEYS[:count]
    section = {
        "params": PARAMS,
        "models": [model("tiny-llama", SHA)],
        "nodes": [node(k, f"node-{i}", [MODEL]) for i, k in enumerate(keys)],
    }
    poc = {"params": poc_params(**ALWAYS, dispute_voters=str(count - 2))}
    collateral = [(100 + 50 * i) * GNK for i in range(count)]
    return host_chain(home, collateral, extra={"inference": section, "poc": poc}, authority=raw(AUTH))


def votes(home: Path, count: int) -> list[dict[str, Any]]:
    """On ``count`` hosts, a dispute's votes up to the one that decides it, for each outcome."""
    rows = []
    by_address = {addr(k): k for k in KEYS[:count]}
    with hosts_chain(home, count) as chain:
        for n, (verdict, score, outcome) in enumerate(((MISMATCH, 2_000, "INVALIDATED"), (MATCH, 995_000, "CLEARED"))):
            inference_id, _ = finished(chain, f'{{"vote":{n}}}'.encode())
            chain.block()
            chain.block()
            accuser = by_address[validation(chain, inference_id).validator]
            ok(deliver(chain, accuser, validate_message(addr(accuser), inference_id, MISMATCH, 3_000))[0])
            chain.block()
            chain.block()
            voters = sorted(validation(chain, inference_id).votes, key=lambda v: (v.power, v.voter))
            for i, ballot in enumerate(voters):
                voter = by_address[ballot.voter]
                result, _ = deliver(chain, voter, validate_message(ballot.voter, inference_id, verdict, score))
                ok(result)
                decided = validation(chain, inference_id).status != poc_pb2.STATUS_DISPUTED
                what = f"vote {poc_pb2.Verdict.Name(verdict)} ({len(voters)} voters), " + (
                    f"deciding: {outcome}" if decided else f"vote {i + 1}"
                )
                rows.append(row(what, 1, result.gas_used))
                if decided:
                    break
            assert poc_pb2.Status.Name(validation(chain, inference_id).status) == f"STATUS_{outcome}"
    return rows


def row(what: str, messages: int, gas_used: int) -> dict[str, Any]:
    return {"what": what, "messages": messages, "gas_used": gas_used, "per_message": -(-gas_used // messages)}


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        rows = verdicts(Path(scratch) / "verdicts")
        for count in (4, 5):  # 2 voters, and x/poc's default of 3
            rows += votes(Path(scratch) / f"votes{count}", count)
    print("| transaction | messages | gas used | per message |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['what']} | {r['messages']} | {r['gas_used']:,} | {r['per_message']:,} |")
    largest = max(r["per_message"] for r in rows)
    print(f"\nlargest per message: {largest:,}; 1.5x: {largest * 3 // 2:,}")


if __name__ == "__main__":
    main()
