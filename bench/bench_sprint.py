"""Sprint race throughput and the cost of verifying sampled nonces, on this machine's CPU.

Race: nonces/s of the default race (RaceParams()) at several batch sizes and torch thread counts,
median of --repeats runs. Verification: the cost per sampled nonce of recomputing it and checking its
Merkle path, alone (batch of one) and inside one verify() of the documented n samples. Prints a
markdown section for bench/RESULTS.md and writes it to bench/results_sprint.md.

    .venv/bin/python bench/bench_sprint.py
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import log  # noqa: E402
from mlnode.sprint.commitment import commit, respond  # noqa: E402
from mlnode.sprint.merkle import path_holds  # noqa: E402
from mlnode.sprint.params import RaceParams  # noqa: E402
from mlnode.sprint.race import RaceModel, distances, run_race  # noqa: E402
from mlnode.sprint.verifier import VerifyPolicy, verify  # noqa: E402

SEED = hashlib.sha256(b"bench epoch").digest()
PUBKEY = b"\x02" + hashlib.sha256(b"bench node").digest()
RESULTS = Path(__file__).with_name("results_sprint.md")


def median_seconds(work: Callable[[], object], repeats: int) -> float:
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def race_table(params: RaceParams, batch_sizes: list[int], threads: list[int], repeats: int) -> list[str]:
    """Nonces/s per (threads, batch); each run covers max(64, 4 × batch) nonces."""
    rows = [
        "| torch threads | batch | nonces per run | nonces/s (median) | ms per batch |",
        "|---:|---:|---:|---:|---:|",
    ]
    for thread_count in threads:
        torch.set_num_threads(thread_count)
        for batch in batch_sizes:
            race = RaceModel.build(params.model_copy(update={"batch_size": batch}), SEED)
            count = max(64, 4 * batch)
            seconds = median_seconds(lambda: distances(race, PUBKEY, range(count)), repeats)
            per_batch_ms = seconds * 1e3 * batch / count
            rows.append(f"| {thread_count} | {batch} | {count} | {count / seconds:,.0f} | {per_batch_ms:.2f} |")
            log(rows[-1])
    return rows


def verify_table(params: RaceParams, nonces: int, threads: list[int], repeats: int) -> list[str]:
    """Per sampled nonce: recompute + path alone, and within one batched verify() of n samples."""
    race = RaceModel.build(params.model_copy(update={"target_rate": 0.25}), SEED)
    proofs = run_race(race, PUBKEY, 0, nonces)
    commitment, tree = commit(proofs, race.r_target, SEED, PUBKEY)
    policy = VerifyPolicy()
    samples = policy.plan.samples
    randomness = hashlib.sha256(b"bench challenge").digest()
    openings = respond(tree, randomness, samples)
    one = openings[0]

    def alone() -> None:
        path_holds(commitment.root, commitment.count, one.index, one.proof, one.path)
        distances(race, PUBKEY, [one.proof.nonce])

    rows = [
        f"Commitment of {len(proofs):,} proofs (tree depth {len(tree.levels) - 1}), plan n = {samples} samples "
        f"({len(openings)} distinct leaves opened), recompute batch {params.batch_size}; ms per sampled nonce.",
        "",
        "| torch threads | alone: recompute (batch of 1) + Merkle path | batched: verify() ÷ n "
        "| of which Merkle path | whole verify() ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for thread_count in threads:
        torch.set_num_threads(thread_count)
        batched = median_seconds(lambda: verify(commitment, randomness, openings, race, policy), repeats)
        paths = median_seconds(
            lambda: [path_holds(commitment.root, commitment.count, o.index, o.proof, o.path) for o in openings], repeats
        )
        rows.append(
            f"| {thread_count} | {median_seconds(alone, repeats) * 1e3:.2f} | {batched * 1e3 / samples:.3f} "
            f"| {paths * 1e3 / len(openings):.3f} | {batched * 1e3:.1f} |"
        )
        log(rows[-1])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,16,64,256", help="comma-separated race batch sizes")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--verify-nonces", type=int, default=4096, help="race range behind the verified commitment")
    args = parser.parse_args()
    params = RaceParams()
    model = params.transformer
    threads = [int(t) for t in args.threads.split(",")]
    race_rows = race_table(params, [int(b) for b in args.batches.split(",")], threads, args.repeats)
    verify_rows = verify_table(params, args.verify_nonces, threads, args.repeats)
    section = [
        "## Sprint race and verification (issue: ML node)",
        "",
        "`.venv/bin/python bench/bench_sprint.py`",
        "",
        f"{platform.processor() or platform.machine()}, nproc = {os.cpu_count()}, torch {torch.__version__}, "
        f"load average at the end {os.getloadavg()[0]:.1f}, median of {args.repeats} runs. Default race: "
        f"dim {model.dim}, {model.n_layers} layers, {model.n_heads} heads, ffn {model.ffn_dim}, "
        f"{params.input_length} input tokens, float32.",
        "",
        "### Race throughput",
        "",
        *race_rows,
        "",
        "### Verification cost",
        "",
        *verify_rows,
        "",
    ]
    text = "\n".join(section)
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
