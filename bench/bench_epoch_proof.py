"""The epoch's proof (issue #25, deliverable 4): what it costs a light client, and what it adds to the chain.

1. Light client, one epoch: a fresh ``LightClient`` from a trusted set of V validators (each a real BLS key)
   checks one handoff (the outgoing set signs the incoming one), the summary's certificate, one host's line
   among H (its RFC 6962 path) and one inference's leaf among L in that host's work root:
   ``LightClient.verify_work``, two FastAggregateVerify calls in all. With blst (``sdk.crypto.bls``), and once
   with py_ecc for scale. The proofs are built here as the chain builds them (same types, same hashes), so the
   figure is the verification alone, without the node's answers' transfer.
2. Chain, the epoch-end block: a GonkaApp over a fresh store, H hosts' weights (x/stake) and EpochWork records
   (x/inference) written; then x/sprint's ``write_summary`` (reads both, hashes H lines, stores the summary)
   and x/bls's ``record_next_extras`` (asks x/sprint for the hash, compares the power table of V validators
   with the last handoff, writes the extras record: what every block with vote extensions pays) timed in one
   branch, as the first block of the next epoch runs them.

    .venv/bin/python bench/bench_epoch_proof.py                      # V=100, H=1000, L=10000
    .venv/bin/python bench/bench_epoch_proof.py --validators 200 --hosts 5000 --repeats 20
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import GonkaApp  # noqa: E402
from bench.common import log  # noqa: E402
from protogen.gonka.bls.v1 import bls_pb2  # noqa: E402
from protogen.gonka.bls.v1 import query_pb2 as bls_query  # noqa: E402
from protogen.gonka.inference.v1 import inference_pb2  # noqa: E402
from protogen.gonka.inference.v1 import query_pb2 as inference_query  # noqa: E402
from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2  # noqa: E402
from sdk.context import BlockHeader, Context  # noqa: E402
from sdk.crypto import bech32, bls, certificate, merkle  # noqa: E402
from sdk.store.cachekv import CacheKV  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402
from x.sprint import types  # noqa: E402
from x.sprint.client.epochproof import HANDOFF_EXTRA, LightClient, handoff_hash  # noqa: E402

CHAIN = "gonka-bench"


def operator(i: int) -> bytes:
    return hashlib.sha256(b"operator %d" % i).digest()[:20]


def signed_certificate(
    height: int, secrets: list[bytes], members: list[bls_pb2.HandoffValidator], extras: list[bls_pb2.SignedExtra]
) -> tuple[bls_pb2.Certificate, bls_pb2.ValidatorSet]:
    """A certificate of ``height`` signed by every member, as x/bls stores it, with its validator set."""
    commitment = hashlib.sha256(b"app hash %d" % height).digest()
    digest = certificate.extras_digest([(e.name, e.digest) for e in extras])
    message = certificate.signing_message(CHAIN, height, commitment, digest)
    signature = bls.aggregate([bls.sign(s, message) for s in secrets])
    validator_set = bls_pb2.ValidatorSet(
        validators=[
            bls_pb2.SigningValidator(address=bytes(20), operator=m.operator, power=m.power, public_key=m.public_key)
            for m in members
        ]
    )
    cert = bls_pb2.Certificate(
        height=height,
        signers=certificate.encode_signers([True] * len(members)),
        signature=signature,
        commitment=commitment,
        extras=extras,
    )
    return cert, validator_set


def build_proofs(
    validators: int, hosts: int, leaves: int
) -> tuple[
    bls_pb2.ValidatorSetHandoff, bytes, inference_query.QueryWorkProofResponse, query_pb2.QueryEpochProofResponse
]:
    """Genesis set, an inference id, its work proof and its epoch's proof (one handoff at 15, summary at 17)."""
    secrets = [bls.keygen(hashlib.sha256(b"secret %d" % i).digest()) for i in range(validators)]
    order = sorted(range(validators), key=operator)

    def members(power: int) -> list[bls_pb2.HandoffValidator]:
        return [
            bls_pb2.HandoffValidator(
                operator=bech32.encode(operator(i)), public_key=bls.public_key(secrets[i]), power=power
            )
            for i in order
        ]

    genesis = bls_pb2.ValidatorSetHandoff(effective_height=1, validators=members(100), previous_hash=bytes(32))
    handoff = bls_pb2.ValidatorSetHandoff(
        effective_height=15, recorded_height=13, validators=members(120), previous_hash=handoff_hash(genesis)
    )
    ordered_secrets = [secrets[i] for i in order]
    h_cert, h_set = signed_certificate(
        14,
        ordered_secrets,
        list(genesis.validators),
        [bls_pb2.SignedExtra(name=HANDOFF_EXTRA, digest=handoff_hash(handoff))],
    )
    executor = operator(10_000)
    inference_id = hashlib.sha256(b"the inference").digest()
    work_leaves = [hashlib.sha256(b"leaf %d" % n).digest() + executor + bytes(40) for n in range(leaves)]
    index = leaves // 3
    work_leaves[index] = inference_id + executor + bytes(40)
    host_ops = sorted([executor] + [operator(20_000 + i) for i in range(hosts - 1)])
    lines, rows = [], []
    for op in host_ops:
        row = sprint_pb2.HostSummary(
            host=bech32.encode(op),
            weight=1000,
            work_root=merkle.root(work_leaves) if op == executor else hashlib.sha256(op).digest(),
            inferences=leaves if op == executor else 7,
            tokens=1234,
        )
        rows.append(row)
        lines.append(types.host_line(op, row.weight, row.work_root, row.inferences, row.tokens))
    line_index = host_ops.index(executor)
    summary = sprint_pb2.EpochSummary(
        epoch=2,
        hosts=[rows[line_index]],
        host_count=hosts,
        hosts_root=merkle.root(lines),
        total_weight=1000 * hosts,
        total_inferences=leaves + 7 * (hosts - 1),
        total_tokens=1234 * hosts,
        height=17,
    )
    s_hash = types.summary_hash(
        2, hosts, summary.hosts_root, summary.total_weight, summary.total_inferences, summary.total_tokens
    )
    s_cert, s_set = signed_certificate(
        18, ordered_secrets, list(handoff.validators), [bls_pb2.SignedExtra(name=types.SUMMARY_EXTRA, digest=s_hash)]
    )
    answer = query_pb2.QueryEpochProofResponse(
        summary=summary,
        host_index=line_index,
        host_proof=merkle.inclusion_proof(lines, line_index),
        certificate=s_cert,
        validator_set=s_set,
        handoffs=[
            bls_query.HandoffProof(handoff=genesis),
            bls_query.HandoffProof(handoff=handoff, certificate=h_cert, validator_set=h_set),
        ],
        chain_id=CHAIN,
    )
    work = inference_query.QueryWorkProofResponse(
        leaf=work_leaves[index],
        index=index,
        total=leaves,
        proof=merkle.inclusion_proof(work_leaves, index),
        root=merkle.root(work_leaves),
        epoch=2,
        host=bech32.encode(executor),
        final=True,
    )
    return genesis, inference_id, work, answer


def bench_client(args: argparse.Namespace) -> None:
    log(f"building proofs: {args.validators} validators, {args.hosts} hosts, {args.leaves} leaves")
    genesis, inference_id, work, answer = build_proofs(args.validators, args.hosts, args.leaves)
    backends = [("blst", bls.fast_aggregate_verify, args.repeats)]
    if args.py_ecc:
        from py_ecc.bls import G2ProofOfPossession

        backends.append(("py_ecc", G2ProofOfPossession.FastAggregateVerify, 1))
    for name, backend, repeats in backends:
        LightClient(CHAIN, genesis, backend).verify_work(inference_id, work, answer)  # warm (key parsing cache)
        times = []
        for _ in range(repeats):
            client = LightClient(CHAIN, genesis, backend)  # the client at the previous epoch's set, as it stays
            start = time.perf_counter()
            client.verify_work(inference_id, work, answer)
            times.append(time.perf_counter() - start)
        print(
            f"light client, one epoch ({name}): median {statistics.median(times) * 1e3:.2f} ms, "
            f"min {min(times) * 1e3:.2f} ms over {repeats} (V={args.validators}, H={args.hosts}, L={args.leaves}; "
            f"2 aggregate verifications, proof {len(answer.SerializeToString()) + len(work.SerializeToString())} bytes)"
        )


def bench_chain(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = GonkaApp(CommitStore(str(Path(folder) / "db")))
        base = CacheKV(app.store)
        ctx = Context(base, BlockHeader(CHAIN, 100, 0))
        weights = {operator(30_000 + i): 1000 + i for i in range(args.hosts)}
        app.stake_keeper.set_validator_powers(ctx, {operator(i): 100 for i in range(args.validators)})
        app.stake_keeper.set_epoch_weights(ctx, 3, weights)
        for i, op in enumerate(sorted(weights)):
            app.inference_keeper.set_epoch_work(
                ctx,
                inference_pb2.EpochWork(
                    epoch=3,
                    host=bech32.encode(op),
                    units=500 * i,
                    count=i,
                    root=hashlib.sha256(op).digest(),
                    final=True,
                ),
            )
        times, extras_times = [], []
        for _ in range(args.repeats):
            branch = Context(CacheKV(base), BlockHeader(CHAIN, 101, 0))
            start = time.perf_counter()
            summary = app.sprint_keeper.write_summary(branch, 3)
            middle = time.perf_counter()
            app.bls_keeper.record_next_extras(branch, 101)
            end = time.perf_counter()
            times.append(middle - start)
            extras_times.append(end - middle)
        assert summary.host_count == args.hosts
        print(
            f"epoch-end block, {args.hosts} hosts: write_summary median {statistics.median(times) * 1e3:.2f} ms, "
            f"record_next_extras (V={args.validators}) {statistics.median(extras_times) * 1e3:.2f} ms "
            f"over {args.repeats} "
            f"(summary {len(summary.SerializeToString())} bytes)"
        )
        app.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validators", type=int, default=100)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--leaves", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--no-py-ecc", dest="py_ecc", action="store_false", help="skip the py_ecc figure")
    parser.add_argument("--parts", nargs="+", choices=["client", "chain"], default=["client", "chain"])
    args = parser.parse_args()
    if "client" in args.parts:
        bench_client(args)
    if "chain" in args.parts:
        bench_chain(args)


if __name__ == "__main__":
    main()
