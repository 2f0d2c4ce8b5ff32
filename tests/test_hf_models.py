"""Hugging Face Llama/Qwen2 checkpoints in our runtime, and our checkpoints out to ``transformers``.

Tiny random models and a tiny byte-level BPE tokenizer are made here (no download); ``transformers`` is
the reference.
"""

from __future__ import annotations

import json
from itertools import accumulate
from pathlib import Path
from typing import Any

import httpx
import pytest
import torch
from safetensors.torch import load_file
from servers import serve
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from tokenizers import decoders as tok_decoders
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, PreTrainedModel, Qwen2Config, Qwen2ForCausalLM

from gonkad.cli import main
from mlnode import tokenizer as byte_tokenizer
from mlnode.hf import is_hf_directory, load_hf_model
from mlnode.hf_tokenizer import HFTokenizer
from mlnode.model import KVCache, Transformer
from mlnode.node import build_backend
from mlnode.nodeinfo import Hardware
from mlnode.server import create_app
from mlnode.settings import NodeSettings
from mlnode.weights import random_model, save_model, weights_sha256

TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Name a prime — ünïcode too."},
]
SHAPE: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 128,
    "rope_theta": 50000.0,
    "rms_norm_eps": 1e-6,
    "initializer_range": 0.2,  # varied greedy answers, not one token repeated
}


def write_tokenizer(directory: Path) -> int:
    """Train a ~300-token byte-level BPE and write it with a ChatML template; returns its vocabulary size."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tok_decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = ["the quick brown fox jumps over the lazy dog", "name a prime number", "you are terse"] * 20
    bpe.train_from_iterator(corpus, trainer)
    bpe.save(str(directory / "tokenizer.json"))
    settings = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "chat_template": TEMPLATE,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(settings))
    return int(bpe.get_vocab_size())


def make_checkpoint(directory: Path, family: str) -> PreTrainedModel:
    """A random checkpoint of ``family`` with every norm and bias perturbed (so none is a no-op)."""
    vocab = write_tokenizer(directory)
    torch.manual_seed(7)
    if family == "llama":
        model: PreTrainedModel = LlamaForCausalLM(LlamaConfig(vocab_size=vocab, tie_word_embeddings=False, **SHAPE))
    else:
        model = Qwen2ForCausalLM(Qwen2Config(vocab_size=vocab, tie_word_embeddings=True, **SHAPE))
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                param.add_(torch.randn_like(param) * 0.1)
    model.save_pretrained(str(directory))
    return model.eval()


def greedy(model: Transformer, prompt: list[int], steps: int) -> list[int]:
    """Our runtime's KV-cache path: prefill, then one decode per token, argmax each time."""
    cache = KVCache.empty(model.config, 1)
    with torch.inference_mode():
        tokens = [int(model.prefill(torch.tensor(prompt), cache, 0).argmax())]
        for _ in range(steps - 1):
            position = torch.tensor([len(prompt) + len(tokens) - 1])
            tokens.append(int(model.decode(torch.tensor(tokens[-1:]), position, cache)[0].argmax()))
    return tokens


def reference_greedy(model: PreTrainedModel, prompt: list[int], steps: int) -> list[int]:
    with torch.inference_mode():
        out = model.generate(  # type: ignore[operator]
            torch.tensor([prompt]), max_new_tokens=steps, min_new_tokens=steps, do_sample=False, pad_token_id=0
        )
    return [int(t) for t in out[0, len(prompt) :]]


def reference_chat_ids(hf_tokenizer: Any) -> list[int]:
    ids = hf_tokenizer.apply_chat_template(CONVERSATION, tokenize=True, add_generation_prompt=True, return_dict=False)
    return [int(i) for i in ids]


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_a_checkpoint_computes_as_in_transformers(tmp_path: Path, family: str) -> None:
    reference = make_checkpoint(tmp_path, family)
    assert is_hf_directory(tmp_path)
    loaded = load_hf_model(tmp_path)
    config = loaded.config
    assert (config.n_kv_heads, config.qkv_bias, config.tie_embeddings) == (2, family == "qwen2", family == "qwen2")
    stored: dict[str, torch.Tensor] = {}
    for path in tmp_path.glob("*.safetensors"):
        stored.update(load_file(str(path)))
    assert loaded.sha256 == weights_sha256(stored)

    tokens = torch.randint(0, config.vocab_size, (2, 40), generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        ours, theirs = loaded.model(tokens), reference(tokens).logits
    assert (ours - theirs).abs().max().item() < 1e-4

    hf_tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))
    ours_tokenizer = HFTokenizer(tmp_path)
    assert ours_tokenizer.render(CONVERSATION) == hf_tokenizer.apply_chat_template(
        CONVERSATION, tokenize=False, add_generation_prompt=True
    )
    prompt = ours_tokenizer.chat_prompt(CONVERSATION)
    assert prompt == reference_chat_ids(hf_tokenizer)
    assert ours_tokenizer.eos_ids == {hf_tokenizer.convert_tokens_to_ids("<|im_end|>")}
    assert greedy(loaded.model, prompt, 10) == reference_greedy(reference, prompt, 10)


def test_our_checkpoint_exports_to_transformers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "checkpoint"
    recorded = save_model(random_model("tiny", 5).model, source, "tiny-trained")
    exported = tmp_path / "hf"
    main(["mlnode", "export-hf", "--model", str(source), "--out", str(exported)])
    sha = json.loads(capsys.readouterr().out)["identity"].removeprefix("hf@sha256:")

    reference = LlamaForCausalLM.from_pretrained(str(exported)).eval()
    ours = random_model("tiny", 5).model
    tokens = torch.randint(0, byte_tokenizer.VOCAB_SIZE, (2, 50), generator=torch.Generator().manual_seed(4))
    with torch.inference_mode():
        assert (ours(tokens) - reference(tokens).logits).abs().max().item() < 1e-4
    back = load_hf_model(exported)
    assert back.sha256 == sha != recorded  # the names differ, so the exported directory is its own identity
    with torch.inference_mode():
        assert torch.equal(back.model(tokens), ours(tokens))

    pairs = [(m["role"], m["content"]) for m in CONVERSATION]
    hf_tokenizer = AutoTokenizer.from_pretrained(str(exported))
    assert reference_chat_ids(hf_tokenizer) == byte_tokenizer.chat_prompt(pairs)
    assert HFTokenizer(exported).chat_prompt(CONVERSATION) == byte_tokenizer.chat_prompt(pairs)
    text = "plain ascii and ünïcode"
    assert hf_tokenizer.decode(hf_tokenizer.encode(text, add_special_tokens=False)) == text


def test_an_ml_node_serves_a_checkpoint_directory(tmp_path: Path) -> None:
    reference = make_checkpoint(tmp_path, "qwen2")
    hf_tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))
    built = build_backend(NodeSettings(port=0, model=str(tmp_path), device="cpu", threads=1))
    assert built.routers == []  # verification replays our byte tokens only
    app = create_app(built.backend, Hardware(device="cpu", threads=1, memory_bandwidth_gbps=1.0), built.routers)
    prompt = reference_chat_ids(hf_tokenizer)
    end = hf_tokenizer.convert_tokens_to_ids("<|im_end|>")
    with torch.inference_mode():
        out = reference.generate(  # type: ignore[operator]
            torch.tensor([prompt]), max_new_tokens=12, do_sample=False, eos_token_id=end, pad_token_id=0
        )
    expected = [int(t) for t in out[0, len(prompt) :] if int(t) != end]
    assert len(expected) == 12  # the random model does not end early: all 12 tokens are compared
    with serve(app, lifespan="on") as url:
        models = httpx.get(f"{url}/v1/models").json()["data"]
        assert models[0]["identity"] == f"{tmp_path.name}@sha256:{load_hf_model(tmp_path).sha256}"
        body = {"model": tmp_path.name, "messages": CONVERSATION, "max_tokens": 12, "temperature": 0, "logprobs": True}
        answer = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60).json()
        text = hf_tokenizer.decode(expected, skip_special_tokens=True)
        pieces = [bytes(HFTokenizer(tmp_path).token_bytes(t)) for t in expected]
        stop = next(p.decode() for p in pieces[4:] if p and p.isascii() and p.decode().isprintable())
        stopped = httpx.post(f"{url}/v1/chat/completions", json={**body, "stop": [stop]}, timeout=60).json()
    choice = answer["choices"][0]
    assert choice["message"]["content"] == text
    # the answer ends before the token in which the stop sequence starts
    cut = stopped["choices"][0]["message"]["content"]
    assert stopped["choices"][0]["finish_reason"] == "stop" and text.startswith(cut) and stop not in cut
    at = b"".join(pieces).find(stop.encode())
    keep = sum(1 for end in accumulate(map(len, pieces)) if end <= at)
    assert cut == b"".join(pieces[:keep]).decode("utf-8", errors="replace")
    answer_bytes = b"".join(bytes(t["bytes"]) for t in choice["logprobs"]["content"])
    assert answer_bytes == b"".join(pieces) and answer_bytes.decode("utf-8", errors="replace") == text
    assert answer["usage"] == {
        "prompt_tokens": len(prompt),
        "completion_tokens": len(expected),
        "total_tokens": len(prompt) + len(expected),
    }
