"""Race parameters: consensus data every node of an epoch must share (plain, frozen, JSON-able), their
hash, and the named presets a node can be started with."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mlnode.config import ModelConfig

DEFAULT_RACE_MODEL = ModelConfig(dim=256, n_layers=4, n_heads=4, ffn_dim=688, max_seq_len=16)
"""≈3.3M parameters: about 50M multiply-adds per nonce at 16 input tokens."""
TINY_RACE_MODEL = ModelConfig(dim=64, n_layers=2, n_heads=4, ffn_dim=176, max_seq_len=8)
"""≈0.13M parameters: about 0.8M multiply-adds per nonce at 8 input tokens."""
PARAMS_TAG = b"gonka/sprint/v1/params"
NODE_LOCAL = frozenset({"batch_size"})
"""RaceParams fields a node chooses for itself; they are left out of the params hash."""


class RaceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    transformer: ModelConfig = DEFAULT_RACE_MODEL
    input_length: int = Field(16, ge=1)
    """Tokens per nonce input; the output read is the last position's hidden state."""
    batch_size: int = Field(256, ge=1)
    """Nonces per forward pass. A node-local choice: it changes float rounding only, within tolerance."""
    target_rate: float = Field(1e-3, gt=0, lt=0.5)
    """Expected share of nonces that are proofs; sets r_target."""
    init_gain: float = Field(2.0, gt=0)
    """Weight scale in units of 1/sqrt(fan_in); see race.init_race_weights."""

    @model_validator(mode="after")
    def _input_fits(self) -> RaceParams:
        if self.input_length > self.transformer.max_seq_len:
            raise ValueError(f"input_length {self.input_length} exceeds max_seq_len {self.transformer.max_seq_len}")
        return self


def canonical_params(params: RaceParams) -> bytes:
    """The consensus fields as JSON: sorted keys, no spaces, ASCII; floats as Python's repr, which is the
    shortest string that reads back to the same double, so it is exact and the same on every node."""
    consensus = params.model_dump(exclude=set(NODE_LOCAL))
    return json.dumps(consensus, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def race_params_hash(params: RaceParams) -> bytes:
    """SHA-256(PARAMS_TAG || canonical_params): hosts compare it to know they race the same race;
    batch_size is node-local and does not change it."""
    return hashlib.sha256(PARAMS_TAG + canonical_params(params)).digest()


DEFAULT_RACE_PRESET = "default"
RACE_PRESETS: dict[str, RaceParams] = {
    DEFAULT_RACE_PRESET: RaceParams(),
    "tiny": RaceParams(transformer=TINY_RACE_MODEL, input_length=8, target_rate=1 / 32),
}
"""default: the production race. tiny: localnets and tests on a shared 2-core VM, where one /run of
4,096 nonces takes a fraction of a second on one core and yields ≈128 proofs (README)."""


def race_preset(name: str) -> RaceParams:
    if name not in RACE_PRESETS:
        raise ValueError(f"unknown race preset {name!r}; choose one of {', '.join(RACE_PRESETS)}")
    return RACE_PRESETS[name]
