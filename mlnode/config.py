"""Model configuration: plain data, with size presets from ~1M to ~25M parameters."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from mlnode.tokenizer import VOCAB_SIZE


class ModelConfig(BaseModel):
    """Shape of a LLaMA-style decoder. Stored as ``config.json`` next to the weights."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vocab_size: int = Field(VOCAB_SIZE, ge=1)
    dim: int = Field(128, ge=8)
    n_layers: int = Field(5, ge=1)
    n_heads: int = Field(4, ge=1)
    ffn_dim: int = Field(352, ge=1)
    max_seq_len: int = Field(512, ge=8)
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    # Hugging Face Llama/Qwen2 options; left out of the dump at their defaults, so our own presets' configs
    # (and every hash taken over them) are unchanged.
    n_kv_heads: int | None = Field(None, ge=1, exclude_if=lambda v: v is None)
    """Key/value heads (grouped-query attention); None means one per query head."""
    qkv_bias: bool = Field(False, exclude_if=lambda v: not v)
    """Biases on the query, key and value projections (Qwen2)."""
    tie_embeddings: bool = Field(False, exclude_if=lambda v: not v)
    """The output projection is the token embedding matrix."""

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads

    def parameter_count(self) -> int:
        per_layer = 4 * self.dim * self.dim + 3 * self.dim * self.ffn_dim + 2 * self.dim
        return 2 * self.vocab_size * self.dim + self.n_layers * per_layer + self.dim


PRESETS: dict[str, ModelConfig] = {
    "tiny": ModelConfig(dim=128, n_layers=5, n_heads=4, ffn_dim=352, max_seq_len=512),
    "small": ModelConfig(dim=256, n_layers=6, n_heads=4, ffn_dim=688, max_seq_len=512),
    "base": ModelConfig(dim=512, n_layers=8, n_heads=8, ffn_dim=1376, max_seq_len=1024),
}
"""tiny ≈ 1.1M parameters (tests), small ≈ 4.9M, base ≈ 25.6M."""


def preset(name: str) -> ModelConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name]
