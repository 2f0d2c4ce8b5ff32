"""Export one of our model directories (a DiLoCo checkpoint's ``model/``) as a Hugging Face Llama directory.

Our decoder is Llama's computation exactly (same RMSNorm, rotate-half rotary tables, SwiGLU, no biases,
untied output), so the export is a renaming of tensors plus a ``config.json``. Our byte-level tokenizer
is written as a ``tokenizer.json`` whose 256 byte tokens keep their ids (a byte-level BPE without
merges) followed by our special tokens, with a chat template that writes our prompt format, so
``transformers`` tokenizes a chat exactly as the ML node does.
"""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from mlnode import tokenizer
from mlnode.hf import hf_name
from mlnode.hf_tokenizer import TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, byte_symbols
from mlnode.model import Transformer
from mlnode.weights import CONFIG_FILE, WEIGHTS_FILE, load_model, weights_sha256

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = 'system' if message['role'] == 'developer' else message['role'] %}"
    "{% if role not in ['system', 'user', 'assistant', 'tool'] %}"
    "{{ raise_exception('unknown role ' + role) }}{% endif %}"
    "{{ '<|' + role + '|>' + message['content'] + eos_token }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


def byte_tokenizer() -> Tokenizer:
    """Our vocabulary as a ``tokenizers`` tokenizer: ids 0–255 the bytes, then the specials in id order."""
    vocab = {symbol: byte for byte, symbol in enumerate(byte_symbols())}
    result = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    result.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    result.decoder = decoders.ByteLevel()
    specials = [tokenizer.token_text(token_id) for token_id in range(256, tokenizer.VOCAB_SIZE)]
    result.add_special_tokens([AddedToken(text, special=True, normalized=False) for text in specials])
    return result


def export_hf(model: Transformer, directory: Path) -> str:
    """Write ``model`` as a Hugging Face Llama directory (weights and config); returns the weights'
    SHA-256, the exported directory's identity."""
    config = model.config
    if config.qkv_bias:
        raise ValueError("a model with q/k/v biases is a Qwen2 model, not exported as Llama")
    directory.mkdir(parents=True, exist_ok=True)
    state = {
        hf_name(key): value.detach().contiguous().cpu()
        for key, value in model.state_dict().items()
        if not (config.tie_embeddings and key == "output.weight")
    }
    save_file(state, str(directory / WEIGHTS_FILE), metadata={"format": "pt"})
    body = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": config.vocab_size,
        "hidden_size": config.dim,
        "intermediate_size": config.ffn_dim,
        "num_hidden_layers": config.n_layers,
        "num_attention_heads": config.n_heads,
        "num_key_value_heads": config.kv_heads,
        "head_dim": config.head_dim,
        "max_position_embeddings": config.max_seq_len,
        "rms_norm_eps": config.norm_eps,
        "rope_theta": config.rope_theta,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": config.tie_embeddings,
        "bos_token_id": tokenizer.BOS,
        "eos_token_id": tokenizer.EOT,
        "torch_dtype": "float32",
    }
    (directory / CONFIG_FILE).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return weights_sha256(state)


def export_model_directory(source: Path, directory: Path) -> str:
    """Export our model directory ``source`` (weights checked against its recorded hash) with our
    tokenizer and chat template; returns the exported weights' SHA-256."""
    loaded = load_model(source)
    sha = export_hf(loaded.model, directory)
    byte_tokenizer().save(str(directory / TOKENIZER_FILE))
    settings = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": tokenizer.token_text(tokenizer.BOS),
        "eos_token": tokenizer.token_text(tokenizer.EOT),
        "chat_template": CHAT_TEMPLATE,
        "model_max_length": loaded.config.max_seq_len,
    }
    (directory / TOKENIZER_CONFIG_FILE).write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
    return sha
