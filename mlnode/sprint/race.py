"""The race: a random-weight transformer from the epoch seed, and each nonce's distance to the target.

A nonce's input is ``input_length`` pseudo-random token ids from its own hash stream (seed, public key,
nonce). Its output is the last position's final hidden state, permuted by a permutation from the same
stream, L2-normalised; its Euclidean distance to the seed's target unit vector decides whether the nonce
is a proof (distance < r_target). The per-nonce permutation makes the output's coordinates exchangeable:
the distance then follows (measured, README) the law of a uniformly random unit vector, so r_target is
analytic (calibration.py); without it the proof rate depends on how the seed's target happens to align
with the model's output geometry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from mlnode.model import Transformer
from mlnode.sprint.calibration import r_target
from mlnode.sprint.derive import TARGET_TAG, WEIGHTS_TAG, check_pubkey, check_seed, generator, nonce_bytes
from mlnode.sprint.params import RaceParams
from mlnode.sprint.proof import Proof, to_fixed

WORD_BYTES = 4
"""Each token id and each permutation key is one big-endian uint32 of the nonce's stream."""


def init_race_weights(model: Transformer, source: torch.Generator, gain: float) -> Transformer:
    """Embeddings N(0, 1), matrices N(0, gain²/fan_in), norms 1.

    Why not ``Transformer.init_weights``: with its 0.02 scale the output stays close to the last token's
    embedding (measured on the default race: inputs sharing only their last token give outputs with mean
    cosine 0.22; 0.56 at gain 1), so a prover could screen nonces by their last token without running the
    model. At gain 2 that cosine is 0.04, near the 0.01 of unrelated inputs.
    """
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                param.fill_(1.0)
            elif name == "tok_embeddings.weight":
                param.copy_(torch.randn(param.shape, generator=source))
            else:
                param.copy_(torch.randn(param.shape, generator=source) * (gain / param.shape[1] ** 0.5))
            param.requires_grad_(False)
    return model.eval()


@dataclass(frozen=True, eq=False)
class RaceModel:
    """Everything an epoch seed fixes: the model, the target and r_target (compared by identity)."""

    params: RaceParams
    seed: bytes
    model: Transformer
    target: Tensor
    r_target: int

    @classmethod
    def build(cls, params: RaceParams, seed: bytes) -> RaceModel:
        check_seed(seed)
        config = params.transformer
        model = init_race_weights(Transformer(config), generator(WEIGHTS_TAG, seed), params.init_gain)
        target = F.normalize(torch.randn(config.dim, generator=generator(TARGET_TAG, seed)), dim=0)
        return cls(params, seed, model, target, r_target(config.dim, params.target_rate))


def nonce_inputs(race: RaceModel, pubkey: bytes, nonces: Sequence[int]) -> tuple[Tensor, Tensor]:
    """Token ids [B, input_length] (uint32 mod vocab) and output permutations [B, dim] (stable argsort
    of dim uint32 keys), both read from each nonce's own hash stream."""
    check_pubkey(pubkey)
    length, dim = race.params.input_length, race.params.transformer.dim
    stream = b"".join(nonce_bytes(race.seed, pubkey, nonce, WORD_BYTES * (length + dim)) for nonce in nonces)
    words = np.frombuffer(stream, dtype=">u4").reshape(len(nonces), length + dim)
    tokens = torch.from_numpy((words[:, :length] % race.params.transformer.vocab_size).astype(np.int64))
    permutations = torch.from_numpy(np.argsort(words[:, length:], axis=1, kind="stable"))
    return tokens, permutations


def distance_to_target(race: RaceModel, last_hidden: Tensor, permutations: Tensor) -> Tensor:
    """|normalise(permute(h)) − target| for each row of the last position's hidden states [B, dim]."""
    output = F.normalize(torch.gather(last_hidden, 1, permutations), dim=-1)
    return torch.linalg.vector_norm(output - race.target, dim=-1)


def batch_distances(race: RaceModel, pubkey: bytes, nonces: Sequence[int]) -> list[int]:
    """Fixed-point distances of one batch of nonces, in one forward pass."""
    tokens, permutations = nonce_inputs(race, pubkey, nonces)
    with torch.inference_mode():
        distance = distance_to_target(race, race.model.hidden(tokens)[:, -1], permutations)
    return [to_fixed(value) for value in distance.tolist()]


def distances(race: RaceModel, pubkey: bytes, nonces: Sequence[int]) -> list[int]:
    """Fixed-point distances of any number of nonces, ``params.batch_size`` per forward pass."""
    size = race.params.batch_size
    return [
        distance
        for start in range(0, len(nonces), size)
        for distance in batch_distances(race, pubkey, nonces[start : start + size])
    ]


def run_race(race: RaceModel, pubkey: bytes, nonce_start: int, nonce_count: int) -> list[Proof]:
    """The proofs of a nonce range: every nonce whose distance is under r_target, in nonce order."""
    nonces = range(nonce_start, nonce_start + nonce_count)
    return [
        Proof(nonce, distance)
        for nonce, distance in zip(nonces, distances(race, pubkey, nonces))
        if distance < race.r_target
    ]
