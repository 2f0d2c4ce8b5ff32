"""A LLaMA-style decoder-only transformer: RMSNorm, rotary positions, SwiGLU, causal attention.

Three entry points share the same layers:
- ``forward(tokens)``: full causal pass, no cache (training, teacher-forced verification, Sprint).
- ``prefill(tokens, cache, slot)``: one prompt into one cache slot; returns the last position's logits.
- ``decode(tokens, positions, cache)``: one new token for each of the first n cache slots at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mlnode.config import ModelConfig


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(config: ModelConfig, device: torch.device | str = "cpu") -> tuple[Tensor, Tensor]:
    """cos and sin of every (position, frequency) pair, shape [max_seq_len, head_dim]."""
    half = config.head_dim // 2
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, half, dtype=torch.float64) / half))
    angles = torch.outer(torch.arange(config.max_seq_len, dtype=torch.float64), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float().to(device), angles.sin().float().to(device)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate [B, H, T, D] by the [B, 1, T, D] tables (rotate-half form)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


@dataclass
class KVCache:
    """Keys and values for ``slots`` sequences: per layer, tensors [slots, heads, max_seq_len, head_dim]."""

    keys: list[Tensor]
    values: list[Tensor]

    @classmethod
    def empty(
        cls, config: ModelConfig, slots: int, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu"
    ) -> KVCache:
        shape = (slots, config.kv_heads, config.max_seq_len, config.head_dim)
        return cls(
            [torch.zeros(shape, dtype=dtype, device=device) for _ in range(config.n_layers)],
            [torch.zeros(shape, dtype=dtype, device=device) for _ in range(config.n_layers)],
        )

    @property
    def slots(self) -> int:
        return self.keys[0].shape[0]

    def move(self, source: int, target: int, length: int) -> None:
        """Copy one slot's first ``length`` positions to another slot (keeps live slots contiguous)."""
        for layer in range(len(self.keys)):
            self.keys[layer][target, :, :length] = self.keys[layer][source, :, :length]
            self.values[layer][target, :, :length] = self.values[layer][source, :, :length]


class Attention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.head_dim = config.n_heads, config.head_dim
        self.groups = config.n_heads // config.kv_heads
        kv_dim = config.kv_heads * config.head_dim
        self.wq = nn.Linear(config.dim, config.dim, bias=config.qkv_bias)
        self.wk = nn.Linear(config.dim, kv_dim, bias=config.qkv_bias)
        self.wv = nn.Linear(config.dim, kv_dim, bias=config.qkv_bias)
        self.wo = nn.Linear(config.dim, config.dim, bias=False)

    def _heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, -1, self.head_dim).transpose(1, 2)

    def _expand(self, x: Tensor) -> Tensor:
        """Grouped-query attention: each key/value head serves ``groups`` consecutive query heads."""
        return x if self.groups == 1 else x.repeat_interleave(self.groups, dim=1)

    def forward(
        self,
        x: Tensor,
        cos: Tensor,
        sin: Tensor,
        cache: tuple[Tensor, Tensor] | None = None,
        slot: int | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        """Causal self-attention. With ``slot`` the keys/values are also stored for that cache slot;
        with ``positions`` (decode) each row attends to its own slot's cached prefix."""
        batch, length, dim = x.shape
        q = apply_rope(self._heads(self.wq(x)), cos, sin)
        k = apply_rope(self._heads(self.wk(x)), cos, sin)
        v = self._heads(self.wv(x))
        if cache is not None and positions is not None:
            cache_k, cache_v = cache
            rows = torch.arange(batch, device=x.device)
            cache_k[rows, :, positions] = k[:, :, 0]
            cache_v[rows, :, positions] = v[:, :, 0]
            span = int(positions.max()) + 1
            mask = torch.arange(span, device=x.device)[None, :] <= positions[:, None]
            out = F.scaled_dot_product_attention(
                q,
                self._expand(cache_k[:batch, :, :span]),
                self._expand(cache_v[:batch, :, :span]),
                attn_mask=mask[:, None, None, :],
            )
        else:
            if cache is not None and slot is not None:
                cache[0][slot, :, :length] = k[0]
                cache[1][slot, :, :length] = v[0]
            out = F.scaled_dot_product_attention(q, self._expand(k), self._expand(v), is_causal=length > 1)
        return self.wo(out.transpose(1, 2).reshape(batch, length, dim))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.w1 = nn.Linear(config.dim, config.ffn_dim, bias=False)
        self.w2 = nn.Linear(config.ffn_dim, config.dim, bias=False)
        self.w3 = nn.Linear(config.dim, config.ffn_dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(config.dim, config.norm_eps)
        self.attention = Attention(config)
        self.ffn_norm = RMSNorm(config.dim, config.norm_eps)
        self.feed_forward = FeedForward(config)

    def forward(
        self,
        x: Tensor,
        cos: Tensor,
        sin: Tensor,
        cache: tuple[Tensor, Tensor] | None = None,
        slot: int | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        x = x + self.attention(self.attention_norm(x), cos, sin, cache, slot, positions)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = RMSNorm(config.dim, config.norm_eps)
        self.output = nn.Linear(config.dim, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.output.weight = self.tok_embeddings.weight
        cos, sin = rope_tables(config)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def init_weights(self, seed: int) -> Transformer:
        """Seeded initialisation (normal 0.02; residual projections scaled by 1/sqrt(2·layers))."""
        generator = torch.Generator().manual_seed(seed)
        residual_std = 0.02 / (2 * self.config.n_layers) ** 0.5
        with torch.no_grad():
            for name, param in sorted(self.named_parameters()):
                if name.endswith("norm.weight"):
                    param.fill_(1.0)
                else:
                    std = residual_std if name.endswith(("wo.weight", "w2.weight")) else 0.02
                    param.copy_(torch.randn(param.shape, generator=generator) * std)
        return self

    def _run(
        self,
        tokens: Tensor,
        positions: Tensor,
        cache: KVCache | None = None,
        slot: int | None = None,
        decode_positions: Tensor | None = None,
    ) -> Tensor:
        h = self.tok_embeddings(tokens)
        cos = self.rope_cos[positions][:, None]
        sin = self.rope_sin[positions][:, None]
        for index, layer in enumerate(self.layers):
            layer_cache = None if cache is None else (cache.keys[index], cache.values[index])
            h = layer(h, cos, sin, layer_cache, slot, decode_positions)
        return self.norm(h)

    def hidden(self, tokens: Tensor) -> Tensor:
        """Final normalised hidden states [B, T, dim] of a full causal pass."""
        positions = torch.arange(tokens.shape[1], device=tokens.device).expand(tokens.shape[0], -1)
        return self._run(tokens, positions)

    def forward(self, tokens: Tensor) -> Tensor:
        """Logits [B, T, vocab] of a full causal pass."""
        return self.output(self.hidden(tokens))

    def prefill(self, tokens: Tensor, cache: KVCache, slot: int) -> Tensor:
        """Run one prompt [T] into cache slot ``slot``; logits [vocab] of its last position."""
        positions = torch.arange(tokens.shape[0], device=tokens.device)[None]
        h = self._run(tokens[None], positions, cache, slot=slot)
        return self.output(h[0, -1])

    def decode(self, tokens: Tensor, positions: Tensor, cache: KVCache) -> Tensor:
        """Tokens [n] at ``positions`` [n] for cache slots 0..n-1; logits [n, vocab]."""
        h = self._run(tokens[:, None], positions[:, None], cache, decode_positions=positions)
        return self.output(h[:, 0])
