"""A host's validation work as a share of its race work, per epoch, on this machine's CPU (one torch thread).

Race work: the nonces a host races in an epoch (``--race-nonces``, or the nonces/s measured here × the race
stage's seconds). Validation work: for every other host with power, what the host's own ML node does with that
host's sampled openings (``verify``: the Merkle paths and the n sampled nonces recomputed), plus what that host's
node does to open them (``respond``), counted to the validator's side. Share = (hosts − 1) × one validation ÷ the
race. Both are timed on the same race model, medians of ``--repeats``; the seeds' goal is ≤ 1% (99% useful work).

    .venv/bin/python bench/bench_sprint_duty.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_sprint import median_seconds  # noqa: E402
from bench.common import log  # noqa: E402
from mlnode.sprint.commitment import commit, respond  # noqa: E402
from mlnode.sprint.params import RACE_PRESETS  # noqa: E402
from mlnode.sprint.race import RaceModel, run_race  # noqa: E402
from mlnode.sprint.verifier import VerifyPolicy, verify  # noqa: E402

SEED = hashlib.sha256(b"bench duty epoch").digest()
PUBKEY = b"\x03" + hashlib.sha256(b"bench duty host").digest()
CASES = (
    ("localnet: tiny race, 16,384 nonces per epoch, 4 hosts", "tiny", 16_384, None, 4),
    ("default race, a 600 s race stage (default epochs), 100 validators", "default", None, 600.0, 100),
)


def measure(preset: str, race_nonces: int | None, race_seconds: float | None, hosts: int, repeats: int) -> dict:
    race = RaceModel.build(RACE_PRESETS[preset], SEED)
    sample_nonces = 4_096 if preset == "tiny" else 1_024
    rate = sample_nonces / median_seconds(lambda: run_race(race, PUBKEY, 0, sample_nonces), repeats)
    nonces = race_nonces if race_nonces is not None else int(rate * (race_seconds or 0))
    proofs = run_race(race, PUBKEY, 0, min(nonces, 65_536))
    commitment, tree = commit(proofs, race.r_target, SEED, PUBKEY)
    policy = VerifyPolicy()
    randomness = hashlib.sha256(b"bench duty pair").digest()

    def validate() -> None:
        openings = respond(tree, randomness, policy.plan.samples)
        verdict = verify(commitment, randomness, openings, race, policy)
        assert not verdict.fraud and verdict.failures == 0

    one = median_seconds(validate, repeats)
    race_s = nonces / rate
    return {
        "nonces_per_s": rate,
        "race_nonces": nonces,
        "race_s": race_s,
        "validation_ms": one * 1e3,
        "share": (hosts - 1) * one / race_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| case | nonces/s | race nonces | race s | one validation ms | hosts − 1 | validation ÷ race |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, preset, race_nonces, race_seconds, hosts in CASES:
        r = measure(preset, race_nonces, race_seconds, hosts, args.repeats)
        log(f"{name}: {r}")
        print(
            f"| {name} | {r['nonces_per_s']:,.0f} | {r['race_nonces']:,} | {r['race_s']:.1f} | "
            f"{r['validation_ms']:.1f} | {hosts - 1} | {100 * r['share']:.2f}% |"
        )


if __name__ == "__main__":
    main()
