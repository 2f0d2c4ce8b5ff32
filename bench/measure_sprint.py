"""The measurements behind the Sprint race's design choices (mlnode/sprint/README.md).

1. Recomputation error: the default race's distances at other batch sizes and torch thread counts,
   and float32 against a float64 evaluation of the same model (the scale of any fp32 implementation's
   rounding), and bfloat16 (why the race is specified in fp32).
2. r_target: the observed proof rate at the analytic r_target, with the per-nonce permutation and
   without it (same hidden states), over several seeds.
3. Weight scale: cosine between outputs of inputs sharing only their last token, for
   Transformer.init_weights (0.02) and for the race's init at gains 1 and 2.

    .venv/bin/python bench/measure_sprint.py
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import Tensor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import log  # noqa: E402
from mlnode.model import Transformer  # noqa: E402
from mlnode.sprint.calibration import r_target  # noqa: E402
from mlnode.sprint.derive import WEIGHTS_TAG, generator  # noqa: E402
from mlnode.sprint.params import RaceParams  # noqa: E402
from mlnode.sprint.proof import DISTANCE_SCALE  # noqa: E402
from mlnode.sprint.race import RaceModel, distance_to_target, distances, init_race_weights, nonce_inputs  # noqa: E402

PUBKEY = b"\x02" + hashlib.sha256(b"measure node").digest()
RATES = (0.1, 0.01, 0.001)


def seed_of(index: int) -> bytes:
    return hashlib.sha256(b"measure epoch" + bytes([index])).digest()


def spread(a: list[int], b: list[int]) -> str:
    gaps = sorted(abs(x - y) for x, y in zip(a, b))
    return f"{gaps[-1]:,} | {gaps[int(0.99 * len(gaps))]:,} | {gaps[len(gaps) // 2]:,}"


def recast(race: RaceModel, dtype: torch.dtype) -> RaceModel:
    return RaceModel(race.params, race.seed, copy.deepcopy(race.model).to(dtype), race.target.to(dtype), race.r_target)


def recomputation_error(params: RaceParams, count: int) -> list[str]:
    race = RaceModel.build(params, seed_of(0))
    nonces = range(count)
    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    reference = distances(race, PUBKEY, nonces)
    exact = distances(recast(race, torch.float64), PUBKEY, nonces)
    rows = [
        f"{count:,} nonces; |Δ| in fixed-point units (1e-9 of distance) against threads 1, batch "
        f"{params.batch_size}, float32.",
        "",
        "| evaluation | max | p99 | median |",
        "|---|---:|---:|---:|",
    ]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for batch in (1, 7, params.batch_size):
            other = RaceModel(
                params.model_copy(update={"batch_size": batch}), race.seed, race.model, race.target, race.r_target
            )
            gaps = spread(distances(other, PUBKEY, nonces), reference)
            rows.append(f"| fp32, threads {threads}, batch {batch} | {gaps} |")
            log(rows[-1])
    torch.set_num_threads(default_threads)
    rows.append(f"| fp32 against fp64 | {spread(reference, exact)} |")
    rows.append(f"| bf16 against fp64 | {spread(distances(recast(race, torch.bfloat16), PUBKEY, nonces), exact)} |")
    return rows


def permuted_and_plain(race: RaceModel, count: int) -> tuple[Tensor, Tensor]:
    """Distances of ``count`` nonces with each nonce's permutation and with none, from one forward pass."""
    permuted, plain = [], []
    size = race.params.batch_size
    for start in range(0, count, size):
        tokens, permutations = nonce_inputs(race, PUBKEY, range(start, min(start + size, count)))
        with torch.inference_mode():
            last = race.model.hidden(tokens)[:, -1]
            permuted.append(distance_to_target(race, last, permutations))
            plain.append(distance_to_target(race, last, torch.arange(last.shape[1]).expand_as(permutations)))
    return torch.cat(permuted), torch.cat(plain)


def calibration(params: RaceParams, seeds: int, count: int) -> list[str]:
    dim = params.transformer.dim
    radii = {rate: r_target(dim, rate) / DISTANCE_SCALE for rate in RATES}
    rows = [
        f"{seeds} seeds × {count:,} nonces; observed proof rate ÷ target rate at the analytic r_target.",
        "",
        "| seed | output | " + " | ".join(f"rate {rate}" for rate in RATES) + " |",
        "|---|---|" + "---:|" * len(RATES),
    ]
    per_seed: dict[str, dict[float, list[int]]] = {
        name: {rate: [] for rate in RATES} for name in ("permuted", "not permuted")
    }
    for index in range(seeds):
        permuted, plain = permuted_and_plain(RaceModel.build(params, seed_of(index)), count)
        for name, values in (("permuted", permuted), ("not permuted", plain)):
            hits = {rate: int((values < radius).sum()) for rate, radius in radii.items()}
            for rate in RATES:
                per_seed[name][rate].append(hits[rate])
            rows.append(f"| {index} | {name} | " + " | ".join(f"{hits[r] / count / r:.2f}" for r in RATES) + " |")
            log(rows[-1])
    for name, hits in per_seed.items():
        rows.append(
            f"| all | {name} | "
            + " | ".join(f"{sum(hits[r]) / (seeds * count) / r:.2f} ({sum(hits[r]):,})" for r in RATES)
            + " |"
        )
    for name in per_seed:
        rows.append(
            f"| χ² over seeds ({seeds} dof) | {name} | "
            + " | ".join(f"{chi_square(per_seed[name][r], count, r):.1f}" for r in RATES)
            + " |"
        )
    rows += ["", "r_target (fixed point): " + ", ".join(f"rate {r}: {r_target(dim, r):,}" for r in RATES)]
    return rows


def chi_square(hits: list[int], count: int, rate: float) -> float:
    """Σ (observed − expected)² / variance over seeds: ≈ seeds when every seed's rate is the target rate."""
    expected, variance = count * rate, count * rate * (1 - rate)
    return sum((observed - expected) ** 2 / variance for observed in hits)


def last_token_cosine(model: Transformer, vocab: int, length: int, pairs: int) -> tuple[float, float]:
    """Mean cosine of the last hidden state for inputs sharing only the last token, and for unrelated inputs."""
    source = torch.Generator().manual_seed(0)
    first = torch.randint(0, vocab, (pairs, length), generator=source)
    second = torch.randint(0, vocab, (pairs, length), generator=source)
    shared = torch.cat([second[:, :-1], first[:, -1:]], dim=1)
    with torch.inference_mode():
        a, b, c = (F.normalize(model.hidden(x)[:, -1], dim=-1) for x in (first, shared, second))
    return float((a * b).sum(-1).mean()), float((a * c).sum(-1).mean())


def weight_scale(params: RaceParams, pairs: int) -> list[str]:
    config, seed = params.transformer, seed_of(0)
    models = {"Transformer.init_weights (0.02)": Transformer(config).init_weights(1).eval()}
    for gain in (1.0, 2.0):
        models[f"race init, gain {gain:g}"] = init_race_weights(Transformer(config), generator(WEIGHTS_TAG, seed), gain)
    rows = [
        f"{pairs} input pairs of {params.input_length} tokens; mean cosine of the last position's hidden state.",
        "",
        "| weights | sharing only the last token | unrelated |",
        "|---|---:|---:|",
    ]
    for name, model in models.items():
        same_last, unrelated = last_token_cosine(model, config.vocab_size, params.input_length, pairs)
        rows.append(f"| {name} | {same_last:.3f} | {unrelated:.3f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drift-nonces", type=int, default=1024)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--nonces", type=int, default=20_000, help="nonces per seed for the proof-rate check")
    parser.add_argument("--pairs", type=int, default=1024)
    args = parser.parse_args()
    params = RaceParams()
    sections = [
        ("Recomputation error", recomputation_error(params, args.drift_nonces)),
        ("Weight scale", weight_scale(params, args.pairs)),
        ("Proof rate at the analytic r_target", calibration(params, args.seeds, args.nonces)),
    ]
    print("\n".join(line for title, rows in sections for line in (f"### {title}", "", *rows, "")))


if __name__ == "__main__":
    main()
