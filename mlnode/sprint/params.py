"""Race parameters: consensus data every node of an epoch must share (plain, frozen, JSON-able)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mlnode.config import ModelConfig

DEFAULT_RACE_MODEL = ModelConfig(dim=256, n_layers=4, n_heads=4, ffn_dim=688, max_seq_len=16)
"""≈3.3M parameters: about 50M multiply-adds per nonce at 16 input tokens."""


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
