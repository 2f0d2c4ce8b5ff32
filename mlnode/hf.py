"""Hugging Face Llama and Qwen2 checkpoints, in and out of our decoder.

Both families are our architecture (RMSNorm, rotate-half rotary positions, SwiGLU) plus options our
``ModelConfig`` carries: grouped-query attention, Qwen2's q/k/v biases, tied embeddings. A directory
holds ``config.json`` (``model_type`` llama or qwen2) and one or more ``*.safetensors`` files; tensors
are renamed onto our modules and computed in float32. The identity is ``weights_sha256`` of the tensors
exactly as the files store them (their names, their dtype), so every host computes it from the files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from mlnode.config import ModelConfig
from mlnode.hf_tokenizer import TOKENIZER_FILE, HFTokenizer
from mlnode.model import Transformer
from mlnode.weights import CONFIG_FILE, LoadedModel, finish, weights_sha256

FAMILIES = ("llama", "qwen2")

_LAYER_NAMES = {
    "self_attn.q_proj": "attention.wq",
    "self_attn.k_proj": "attention.wk",
    "self_attn.v_proj": "attention.wv",
    "self_attn.o_proj": "attention.wo",
    "mlp.gate_proj": "feed_forward.w1",
    "mlp.down_proj": "feed_forward.w2",
    "mlp.up_proj": "feed_forward.w3",
    "input_layernorm": "attention_norm",
    "post_attention_layernorm": "ffn_norm",
}
_TOP_NAMES = {"model.embed_tokens": "tok_embeddings", "model.norm": "norm", "lm_head": "output"}


def is_hf_directory(directory: Path) -> bool:
    """Whether ``config.json`` is a Hugging Face config (ours nests the shape under ``config``)."""
    path = directory / CONFIG_FILE
    return path.is_file() and "model_type" in json.loads(path.read_text())


def config_from_hf(body: dict[str, Any]) -> ModelConfig:
    """Our config for a Llama/Qwen2 ``config.json``; anything we would compute differently is refused."""
    family = body.get("model_type")
    if family not in FAMILIES:
        raise ValueError(f"model_type {family!r} is not supported (only {', '.join(FAMILIES)})")
    unsupported = {
        "rope_scaling": body.get("rope_scaling"),
        "attention_bias": body.get("attention_bias"),
        "mlp_bias": body.get("mlp_bias"),
        "use_sliding_window": body.get("use_sliding_window"),
    }
    refused = [key for key, value in unsupported.items() if value]
    if body.get("hidden_act", "silu") != "silu":
        refused.append("hidden_act")
    dim, heads = int(body["hidden_size"]), int(body["num_attention_heads"])
    if body.get("head_dim") not in (None, dim // heads):
        refused.append("head_dim")
    if refused:
        raise ValueError(f"config.json options not supported: {', '.join(sorted(refused))}")
    rope = body.get("rope_parameters") or {}
    return ModelConfig(
        vocab_size=int(body["vocab_size"]),
        dim=dim,
        n_layers=int(body["num_hidden_layers"]),
        n_heads=heads,
        n_kv_heads=int(body.get("num_key_value_heads") or heads),
        ffn_dim=int(body["intermediate_size"]),
        max_seq_len=int(body["max_position_embeddings"]),
        rope_theta=float(body.get("rope_theta") or rope.get("rope_theta") or 10000.0),
        norm_eps=float(body.get("rms_norm_eps", 1e-6)),
        qkv_bias=family == "qwen2",
        tie_embeddings=bool(body.get("tie_word_embeddings", False)),
    )


def our_name(name: str) -> str:
    """Our parameter name for a Hugging Face tensor name."""
    stem, _, kind = name.rpartition(".")
    if stem in _TOP_NAMES:
        return f"{_TOP_NAMES[stem]}.{kind}"
    parts = stem.split(".")
    if parts[:2] == ["model", "layers"] and ".".join(parts[3:]) in _LAYER_NAMES:
        return f"layers.{parts[2]}.{_LAYER_NAMES['.'.join(parts[3:])]}.{kind}"
    raise ValueError(f"unexpected tensor {name!r}")


def hf_name(name: str) -> str:
    """The Hugging Face tensor name for one of our parameter names."""
    stem, _, kind = name.rpartition(".")
    for hf, ours in _TOP_NAMES.items():
        if stem == ours:
            return f"{hf}.{kind}"
    _, index, rest = stem.split(".", 2)
    return f"model.layers.{index}.{next(hf for hf, ours in _LAYER_NAMES.items() if ours == rest)}.{kind}"


def load_hf_model(directory: Path, name: str | None = None) -> LoadedModel:
    """Load a Llama/Qwen2 directory into our decoder (float32), with its tokenizer when it has one."""
    body = json.loads((directory / CONFIG_FILE).read_text())
    config = config_from_hf(body)
    stored: dict[str, torch.Tensor] = {}
    for path in sorted(directory.glob("*.safetensors")):
        stored.update(load_file(str(path)))
    if not stored:
        raise ValueError(f"{directory}: no *.safetensors files")
    model = Transformer(config)
    state = {our_name(key): tensor.float() for key, tensor in stored.items()}
    if config.tie_embeddings:
        state.setdefault("output.weight", state["tok_embeddings.weight"])
    model.load_state_dict(state, strict=True)
    loaded = finish(name or directory.name, model, weights_sha256(stored))
    if (directory / TOKENIZER_FILE).is_file():
        eos = body.get("eos_token_id")
        end = frozenset(eos if isinstance(eos, list) else [] if eos is None else [eos])
        loaded.vocabulary = HFTokenizer(directory).vocabulary(end)
    return loaded
