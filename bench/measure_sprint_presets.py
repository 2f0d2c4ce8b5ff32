"""The race presets' figures (mlnode/sprint/README.md, "Presets").

1. Speed: nonces per second of one /v1/sprint/run's work (run_race, then commit), torch on one thread,
   for every preset; for tiny also the time of one 4,096-nonce run.
2. Proofs per 4,096 nonces of the tiny preset, one run per seed.
3. The tiny preset's proof rate at its analytic r_target, pooled over seeds: the calibration assumes the
   permuted output is a uniform unit vector, which has to hold at dim 64 too.

    .venv/bin/python bench/measure_sprint_presets.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import log  # noqa: E402
from bench.measure_sprint import PUBKEY, chi_square, seed_of  # noqa: E402
from mlnode.sprint.commitment import commit  # noqa: E402
from mlnode.sprint.params import RACE_PRESETS, RaceParams  # noqa: E402
from mlnode.sprint.race import RaceModel, run_race  # noqa: E402

RUN_NONCES = 4096


def timed_run(race: RaceModel, start: int, count: int) -> tuple[float, int]:
    """Seconds for one run's work (race and commit), and its proof count."""
    began = time.perf_counter()
    proofs = run_race(race, PUBKEY, start, count)
    commit(proofs, race.r_target, race.seed, PUBKEY)
    return time.perf_counter() - began, len(proofs)


def speed(name: str, params: RaceParams, count: int, repeats: int) -> str:
    race = RaceModel.build(params, seed_of(0))
    timed_run(race, 0, params.batch_size)  # warm-up
    seconds = statistics.median(timed_run(race, count * (i + 1), count)[0] for i in range(repeats))
    row = f"| {name} | {count:,} | {seconds:.3f} | {count / seconds:,.0f} |"
    log(row)
    return row


def tiny_runs(seeds: int, count: int) -> list[str]:
    rows = ["| seed | proofs in 4,096 nonces | seconds |", "|---:|---:|---:|"]
    for index in range(seeds):
        seconds, proofs = timed_run(RaceModel.build(RACE_PRESETS["tiny"], seed_of(index)), 0, count)
        rows.append(f"| {index} | {proofs} | {seconds:.3f} |")
        log(rows[-1])
    return rows


def tiny_rate(seeds: int, count: int) -> list[str]:
    params = RACE_PRESETS["tiny"]
    rate, hits = params.target_rate, []
    for index in range(seeds):
        hits.append(len(run_race(RaceModel.build(params, seed_of(index)), PUBKEY, 1 << 32, count)))
        log(f"seed {index}: {hits[-1]} proofs, ratio {hits[-1] / count / rate:.3f}")
    pooled = sum(hits) / (seeds * count)
    sigma = (rate * (1 - rate) / (seeds * count)) ** 0.5 / rate
    return [
        f"{seeds} seeds × {count:,} nonces at target rate {rate}: {sum(hits):,} proofs, "
        f"observed ÷ target = {pooled / rate:.3f} (1σ = {sigma:.3f}); "
        f"per seed {', '.join(f'{h / count / rate:.2f}' for h in hits)}; "
        f"χ² over seeds = {chi_square(hits, count, rate):.1f} on {seeds} dof"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--rate-nonces", type=int, default=16_384, help="tiny nonces per seed for the rate check")
    args = parser.parse_args()
    torch.set_num_threads(1)
    counts = {"default": 1024, "tiny": RUN_NONCES}
    sections = [
        (
            "Speed (torch threads 1)",
            ["| preset | nonces per run | seconds (median) | nonces/s |", "|---|---:|---:|---:|"]
            + [speed(name, params, counts.get(name, 1024), args.repeats) for name, params in RACE_PRESETS.items()],
        ),
        ("Tiny: proofs per run", tiny_runs(args.seeds, RUN_NONCES)),
        ("Tiny: proof rate at the analytic r_target", tiny_rate(args.seeds, args.rate_nonces)),
    ]
    print("\n".join(line for title, rows in sections for line in (f"### {title}", "", *rows, "")))


if __name__ == "__main__":
    main()
